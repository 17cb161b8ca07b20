package hub

import "context"

// KnownToken reports whether token is the admin token or an agent's (a
// disabled agent's included: the full check then says why it is refused).
// It is the cheap check made before a request's body is read; it records no
// presence. Unknown tokens cost one indexed read. An enabled agent it reads
// is cached as Authenticate caches it, so that the full check of the same
// call does not read the store again (a wait re-issued after the cache's
// TTL would otherwise read its agent twice per call).
// The read is detached from ctx's cancellation (detachedRead). An error
// means the store could not tell: it is no verdict on the token.
func (s *Agents) KnownToken(ctx context.Context, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	hash := HashToken(token) // once: SHA-256 on every call is not free
	if s.isAdminHash(hash) {
		return true, nil
	}
	if s.auth.has(hash) {
		return true, nil
	}
	gen := s.auth.generation()
	var a *Agent
	rctx, cancel := detachedRead(ctx)
	err := view(rctx, s.store, func(tx agentsTx) (err error) {
		a, err = tx.AgentByTokenHash(hash)
		return err
	})
	cancel()
	if ErrorCode(err) == ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !a.Disabled() {
		s.auth.put(hash, a, gen)
	}
	return true, nil
}
