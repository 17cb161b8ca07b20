package hub

import "context"

// KnownToken reports whether token is the admin token or an agent's (a
// disabled agent's included: the full check then says why it is refused).
// It is the cheap check made before a request's body is read; it records no
// presence. Unknown tokens cost one indexed read.
func (s *Service) KnownToken(ctx context.Context, token string) bool {
	if token == "" {
		return false
	}
	hash := HashToken(token) // once: SHA-256 on every call is not free
	if len(s.cfg.AdminTokenHash) > 0 && TokenHashEqual(hash, s.cfg.AdminTokenHash) {
		return true
	}
	if s.auth.has(hash) {
		return true
	}
	err := s.store.View(ctx, func(tx Tx) error {
		_, err := tx.AgentByTokenHash(hash)
		return err
	})
	return err == nil
}
