package hub_test

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestParkEarlyOnlyWhatWouldPark: ParkEarly registers nothing for a peek,
// a bad request, a wait with messages already there, or in poll mode; it
// returns nil for all but the messages, whose wait it returns holding them,
// not to be parked on.
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
	e := h.ParkEarly(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if e == nil {
		t.Fatal("a wait with a message already there did not keep what its look found")
	}
	defer e.Close()
	if n := h.Waiters.Count(); n != 0 {
		t.Fatalf("%d waits registered, want none", n)
	}
	parked := make(chan struct{})
	go func() { e.Park(ctx); close(parked) }()
	select {
	case <-parked:
	case <-time.After(20 * time.Second):
		t.Fatal("a wait whose look found a message parked")
	}
	p := newTestHub(t, func(c *hub.Config) { c.PollOnly = true })
	if e := p.ParkEarly(ctx, p.agents(t, "carol")[0], hub.WaitRequest{TimeoutSeconds: longWait}); e != nil {
		e.Close()
		t.Error("a wait parked early in poll mode")
	}
}

// readCounter is a store that counts its read transactions.
type readCounter struct {
	hub.Store
	views atomic.Int64
}

func (s *readCounter) View(ctx context.Context, fn func(hub.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

// TestEarlyLookIsTheWaitsLook: a wait whose early look finds messages gets
// from Wait the reply a wait without an early look gets (the same messages
// in the same order, cursor and status, for unread messages, after a
// cursor, and with a limit), for the same store reads: Wait reads nothing
// that look read.
func TestEarlyLookIsTheWaitsLook(t *testing.T) {
	h := newTestHub(t)
	_, aliceToken := h.agent(t, "alice")
	_, bobToken := h.agent(t, "bob")
	st := &readCounter{Store: h.DB}
	svc := h.over(t, st)
	ctx := context.Background()
	alice, err := svc.Authenticate(ctx, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := svc.Authenticate(ctx, bobToken)
	if err != nil {
		t.Fatal(err)
	}
	var first *hub.Message
	for i, p := range []hub.Priority{hub.PriorityLow, hub.PriorityNormal, hub.PriorityUrgent, hub.PriorityHigh, hub.PriorityUrgent} {
		m, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprint("message ", i), Priority: p})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
		}
	}
	// The delivery marks the waits leave stay pending (no watcher runs to
	// write them), so each wait reads the same messages.
	for name, req := range map[string]hub.WaitRequest{
		"unread":         {TimeoutSeconds: longWait},
		"after a cursor": {TimeoutSeconds: longWait, AfterID: hub.FormatMessageID(first.ID)},
		"limited":        {TimeoutSeconds: longWait, Limit: 3},
	} {
		st.views.Store(0)
		want, err := svc.Wait(ctx, bob, req)
		if err != nil {
			t.Fatalf("%s: Wait: %v", name, err)
		}
		wantReads := st.views.Swap(0)
		e := svc.ParkEarly(ctx, bob, req)
		if e == nil {
			t.Fatalf("%s: the early look kept nothing", name)
		}
		e.Park(ctx)
		got, err := svc.Wait(hub.WithEarlyWait(ctx, e), bob, req)
		e.Close()
		if err != nil {
			t.Fatalf("%s: Wait after the early look: %v", name, err)
		}
		if reads := st.views.Load(); reads != wantReads {
			t.Errorf("%s: %d store reads with the early look, want %d as without it", name, reads, wantReads)
		}
		got.Waited, want.Waited = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reply after the early look = %+v, want %+v", name, got, want)
		}
		if len(got.Messages) == 0 || got.TimedOut {
			t.Errorf("%s: reply = %+v, want messages", name, got)
		}
	}
	if n := svc.Waiters.Count(); n != 0 {
		t.Fatalf("%d waits registered after the waits returned, want none", n)
	}

	// The reply leaves its delivery mark (written by the receipts read).
	late, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "late"})
	if err != nil {
		t.Fatal(err)
	}
	req := hub.WaitRequest{TimeoutSeconds: longWait, AfterID: hub.FormatMessageID(late.ID - 1)}
	e := svc.ParkEarly(ctx, bob, req)
	if e == nil {
		t.Fatal("the early look kept nothing")
	}
	delivered := h.Clock.Advance(time.Minute)
	r, err := svc.Wait(hub.WithEarlyWait(ctx, e), bob, req)
	e.Close()
	if err != nil || len(r.Messages) != 1 || r.Messages[0].ID != late.ID {
		t.Fatalf("Wait after the early look = %+v, %v; want the late message", r, err)
	}
	if _, rs, err := svc.Receipts.Get(ctx, alice, hub.FormatMessageID(late.ID)); err != nil || len(rs) != 1 || !rs[0].DeliveredAt.Equal(delivered) {
		t.Errorf("receipts of the late message = %+v, %v; want delivered at %v", rs, err, delivered)
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
	if n := h.Waiters.AgentCount(bob.ID); n != 1 {
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
	if n := h.Waiters.Count(); n != 0 {
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
	if n := h.Waiters.AgentCount(bob.ID); n != 1 {
		t.Fatalf("%d waits of bob registered after alice's peek, want 1", n)
	}
}
