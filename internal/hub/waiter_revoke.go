package hub

import (
	"bytes"
	"slices"
)

// Revocation of parked callers: rotating or revoking a token, disabling an
// agent or revoking a person ends what that principal holds parked at once
// instead of letting it deliver to a token that no longer holds it.

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
// wait or stream registered for a principal revoked after that epoch is
// refused, so none can park on a token revoked between its check and its
// registration.
func (ws *Waiters) Epoch() uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.epoch
}

// Revoke ends everything who holds parked, and refuses the waits and
// streams of who authenticated before now (Epoch): an agent's waits end
// with err, its calls parked on inbox items end as unanswered; a person's
// change streams end. Rotating or revoking a token, disabling or deleting
// an agent, and revoking a person call it. The functions given to
// OnRevoke hear of it last, once the parked calls are woken.
func (ws *Waiters) Revoke(who Principal, err error) {
	ws.mu.Lock()
	ws.epoch++
	ws.revokedAt[who] = ws.epoch
	if who.AgentID != 0 {
		for w := ws.byAgent[who.AgentID]; w != nil; w = w.next {
			if w.err.Load() == nil {
				w.err.Store(&err)
				w.signal()
			}
		}
		for _, ps := range ws.items {
			for _, p := range ps {
				if p.agentID == who.AgentID && !p.revoked {
					p.revoked = true
					p.signal()
				}
			}
		}
	}
	for s := range ws.streams {
		if s.owner == who {
			ws.endStreamLocked(s)
		}
	}
	heard := ws.onRevoke
	ws.mu.Unlock()
	for _, f := range heard {
		f(who)
	}
}

// OnRevoke makes f hear of every revocation from now on, after the
// principal's parked calls were woken: what holds a principal's sessions
// outside the hub (MCP over HTTP) ends them. f must not block.
func (ws *Waiters) OnRevoke(f func(who Principal)) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.onRevoke = append(ws.onRevoke[:len(ws.onRevoke):len(ws.onRevoke)], f)
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
