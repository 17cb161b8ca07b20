package hub

import (
	"bytes"
	"slices"
)

// Revocation of parked waits: rotating or revoking a token, or disabling an
// agent, ends the agent's parked waits at once instead of letting them
// deliver messages to a token that no longer holds the agent.

// errRevoked is the error a wait ends with when its token stopped working.
func errRevoked() error {
	return Errorf(EUNAUTHORIZED, "the token of this wait was rotated or revoked, or its agent disabled, while it was parked: use the agent's current token")
}

// errDisabledWhileWaiting is the error a wait ends with when its agent was
// disabled while it was parked.
func errDisabledWhileWaiting() error {
	return Errorf(EPERMISSION, "the agent was disabled while this call waited")
}

// ParkedTokens returns, for each agent with parked waits, the distinct
// hashes of the tokens those waits were authenticated with.
func (ws *Waiters) ParkedTokens() map[int64][][]byte {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make(map[int64][][]byte, len(ws.byAgent))
	for id, first := range ws.byAgent {
		for w := first; w != nil; w = w.next {
			if w.token != nil && !slices.ContainsFunc(out[id], func(h []byte) bool { return bytes.Equal(h, w.token) }) {
				out[id] = append(out[id], w.token)
			}
		}
	}
	return out
}

// Epoch returns the revocation epoch. Read it before checking a token: a
// wait registered for an agent revoked after that epoch is refused, so no
// wait can park on a token revoked between its check and its registration.
func (ws *Waiters) Epoch() uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.epoch
}

// Revoke ends every parked wait of agentID with err, and its calls parked
// on inbox items, and refuses the waits of that agent authenticated before
// now.
func (ws *Waiters) Revoke(agentID int64, err error) {
	if ws.onRevoke != nil {
		ws.onRevoke(agentID)
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.revokedAt == nil {
		ws.revokedAt = make(map[int64]uint64)
	}
	ws.epoch++
	ws.revokedAt[agentID] = ws.epoch
	for w := ws.byAgent[agentID]; w != nil; w = w.next {
		if w.err.Load() == nil {
			w.err.Store(&err)
			w.signal()
		}
	}
}

// Err returns why the wait was revoked (nil while it is not). A revocation
// wakes the wait through C.
func (w *Waiter) Err() error {
	if e := w.err.Load(); e != nil {
		return *e
	}
	return nil
}

// revokedErr returns why w was revoked, nil if it was not (or w is nil).
func revokedErr(w *Waiter) error {
	if w == nil {
		return nil
	}
	return w.Err()
}
