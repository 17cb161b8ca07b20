package hub_test

import (
	"context"
	"testing"

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
	if n := h.Waiters().Count(); n != 0 {
		t.Errorf("parked waits = %d, want 0", n)
	}
}
