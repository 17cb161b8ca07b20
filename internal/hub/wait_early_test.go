package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestParkEarlyOnlyWhatWouldPark: ParkEarly registers nothing for a peek,
// a bad request, a wait with messages already there, or in poll mode.
func TestParkEarlyOnlyWhatWouldPark(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	zero, negative := int32(0), int32(-1)
	for name, req := range map[string]hub.WaitRequest{
		"a peek":           {TimeoutSeconds: &zero},
		"a negative wait":  {TimeoutSeconds: &negative},
		"a bad after_id":   {TimeoutSeconds: longWait, AfterID: "x"},
		"an unknown after": {TimeoutSeconds: longWait, AfterID: "999"},
	} {
		if e := h.ParkEarly(ctx, bob, req); e != nil {
			e.Close()
			t.Errorf("%s parked early", name)
		}
	}
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "there already"})
	if e := h.ParkEarly(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait}); e != nil {
		e.Close()
		t.Error("a wait with a message already there parked early")
	}
	if n := h.Waiters().Count(); n != 0 {
		t.Fatalf("%d waits registered, want none", n)
	}
	p := newTestHub(t, func(c *hub.Config) { c.PollOnly = true })
	if e := p.ParkEarly(ctx, p.agents(t, "carol")[0], hub.WaitRequest{TimeoutSeconds: longWait}); e != nil {
		e.Close()
		t.Error("a wait parked early in poll mode")
	}
}

// TestWaitGoesOnFromAnEarlyPark: woken while parked early, Wait (given the
// early wait through its context) returns the message with the same
// registration: no second one, and none left after it returns.
func TestWaitGoesOnFromAnEarlyPark(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	e := h.ParkEarly(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if e == nil {
		t.Fatal("a wait with nothing to read did not park early")
	}
	if n := h.Waiters().AgentCount(bob.ID); n != 1 {
		t.Fatalf("%d waits of bob registered, want 1", n)
	}
	parked := make(chan struct{})
	go func() { e.Park(ctx); close(parked) }()
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "wake up"})
	select {
	case <-parked:
	case <-time.After(20 * time.Second):
		t.Fatal("the early wait was not woken by a post")
	}
	r, err := h.Wait(hub.WithEarlyWait(ctx, e), bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if err != nil || len(r.Messages) != 1 || r.Messages[0].Body != "wake up" || r.TimedOut {
		t.Fatalf("Wait after the early park: %+v %v, want the message", r, err)
	}
	if n := h.Waiters().Count(); n != 0 {
		t.Fatalf("%d waits registered after Wait returned, want none", n)
	}
}

// TestEarlyWaitIsItsCallersOnly: Wait ignores an early wait of another
// agent in its context, and unregisters nothing of it.
func TestEarlyWaitIsItsCallersOnly(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	e := h.ParkEarly(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if e == nil {
		t.Fatal("bob's wait did not park early")
	}
	defer e.Close()
	zero := int32(0)
	if _, err := h.Wait(hub.WithEarlyWait(ctx, e), alice, hub.WaitRequest{TimeoutSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if n := h.Waiters().AgentCount(bob.ID); n != 1 {
		t.Fatalf("%d waits of bob registered after alice's peek, want 1", n)
	}
}
