package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// Rotating or revoking a token ends the waits parked with it at once, with
// EUNAUTHORIZED, and a message posted afterwards is not delivered to them.
func TestWaitEndsWhenTokenChanges(t *testing.T) {
	t.Parallel()
	for _, revoke := range []bool{false, true} {
		h := newTestHub(t)
		alice, _ := h.agent(t, "alice")
		_, tok := h.agent(t, "bob")
		bob := h.auth(t, tok)
		c := h.parkedWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: longWait})
		if _, _, err := h.RotateToken(context.Background(), "bob", revoke); err != nil {
			t.Fatal(err)
		}
		h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "after the rotation"})
		r := result(t, c)
		wantCode(t, "parked wait after the token changed", r.err, hub.EUNAUTHORIZED)
		if r.res != nil {
			t.Errorf("revoke=%v: the wait returned %d messages to the old token", revoke, len(r.res.Messages))
		}
	}
}

// A token checked before a rotation cannot park a wait after it: the wait
// is refused rather than parked on a dead token.
func TestWaitRefusedWhenTokenChangedAfterCheck(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	_, tok := h.agent(t, "bob")
	bob := h.auth(t, tok)
	if _, _, err := h.RotateToken(context.Background(), "bob", false); err != nil {
		t.Fatal(err)
	}
	_, err := h.Wait(context.Background(), bob, hub.WaitRequest{TimeoutSeconds: longWait})
	wantCode(t, "wait with a token checked before its rotation", err, hub.EUNAUTHORIZED)
	if n := h.Waiters.Count(); n != 0 {
		t.Errorf("parked waits = %d, want 0", n)
	}
}

// Shutdown answers every parked wait at once, in notify and in poll mode,
// as a normal timed-out reply, and so does every wait started after it;
// a revocation ends a poll-mode wait at once too.
func TestWaitEndsAtShutdownAndRevocation(t *testing.T) {
	t.Parallel()
	for _, poll := range []bool{false, true} {
		h := newTestHub(t, func(c *hub.Config) {
			if poll {
				c.PollOnly, c.PollInterval = true, time.Hour
			}
		})
		as := h.agents(t, "alice", "bob")
		parked := []<-chan waitCall{
			h.parkedWait(t, context.Background(), as[0], hub.WaitRequest{TimeoutSeconds: longWait}),
			h.parkedWait(t, context.Background(), as[1], hub.WaitRequest{TimeoutSeconds: longWait}),
		}
		_, tok := h.agent(t, "carol")
		carol := h.auth(t, tok)
		revoked := h.parkedWait(t, context.Background(), carol, hub.WaitRequest{TimeoutSeconds: longWait})
		if _, _, err := h.RotateToken(context.Background(), "carol", true); err != nil {
			t.Fatal(err)
		}
		wantCode(t, fmt.Sprintf("poll=%v: parked wait after a revocation", poll), result(t, revoked).err, hub.EUNAUTHORIZED)
		h.Shutdown()
		parked = append(parked, h.startWait(context.Background(), as[0], hub.WaitRequest{TimeoutSeconds: longWait}))
		for i, c := range parked {
			if r := result(t, c); r.err != nil || !r.res.TimedOut {
				t.Errorf("poll=%v: wait %d at shutdown = %+v, %v; want a timed-out reply", poll, i, r.res, r.err)
			}
		}
	}
}
