package hub_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// readCounter is a store that counts its read transactions.
type readCounter struct {
	hub.Store
	views atomic.Int64
}

func (s *readCounter) View(ctx context.Context, fn func(hub.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

// TestBeginRegistersOnlyWhatParks: Begin refuses a bad request and
// registers nothing; it registers nothing for a peek or for a wait whose
// first look found messages, which Finish answers with.
func TestBeginRegistersOnlyWhatParks(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	zero, negative := int32(0), int32(-1)
	for name, tt := range map[string]struct {
		req  hub.WaitRequest
		code string
	}{
		"a negative wait":  {hub.WaitRequest{TimeoutSeconds: &negative}, hub.EINVALID},
		"a bad after_id":   {hub.WaitRequest{TimeoutSeconds: longWait, AfterID: "x"}, hub.EINVALID},
		"an unknown after": {hub.WaitRequest{TimeoutSeconds: longWait, AfterID: "999"}, hub.EINVALID},
	} {
		w, err := h.Begin(ctx, bob, tt.req)
		if w != nil || hub.ErrorCode(err) != tt.code {
			t.Errorf("%s: Begin = %v, %v; want code %s", name, w, err, tt.code)
		}
	}
	peek, err := h.Begin(ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Waiters.Count(); n != 0 {
		t.Fatalf("a peek registered %d waits, want none", n)
	}
	peek.Park(ctx) // returns at once
	if r, err := peek.Finish(ctx); err != nil || !r.TimedOut || len(r.Messages) != 0 {
		t.Fatalf("peek = %+v, %v; want an empty timed-out reply", r, err)
	}
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "there already"})
	w, err := h.Begin(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Waiters.Count(); n != 0 {
		t.Fatalf("a wait whose look found a message holds %d registrations, want none", n)
	}
	w.Park(ctx) // returns at once
	if r, err := w.Finish(ctx); err != nil || len(r.Messages) != 1 || r.TimedOut {
		t.Fatalf("Finish = %+v, %v; want the message", r, err)
	}
}

// TestFinishReadsNoMoreThanWait: a wait whose first look found messages
// gets from Finish what Wait gives (Wait is the three phases), with no
// store read beyond the first look and the status.
func TestFinishReadsNoMoreThanTheFirstLook(t *testing.T) {
	h := newTestHub(t)
	_, aliceToken := h.agent(t, "alice")
	_, bobToken := h.agent(t, "bob")
	st := &readCounter{Store: h.DB}
	svc := h.over(t, st)
	ctx := context.Background()
	alice, _ := svc.Authenticate(ctx, aliceToken)
	bob, _ := svc.Authenticate(ctx, bobToken)
	first, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "second"}); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		req   hub.WaitRequest
		reads int64 // the cursor's check, the look, the status
	}{
		"unread":         {hub.WaitRequest{TimeoutSeconds: longWait}, 2},
		"after a cursor": {hub.WaitRequest{TimeoutSeconds: longWait, AfterID: hub.FormatMessageID(first.ID)}, 3},
	} {
		st.views.Store(0)
		w, err := svc.Begin(ctx, bob, tt.req)
		if err != nil {
			t.Fatal(err)
		}
		w.Park(ctx)
		r, err := w.Finish(ctx)
		if err != nil || len(r.Messages) == 0 {
			t.Fatalf("%s: %+v, %v; want messages", name, r, err)
		}
		if reads := st.views.Load(); reads != tt.reads {
			t.Errorf("%s: %d store reads, want %d", name, reads, tt.reads)
		}
	}
	if n := svc.Waiters.Count(); n != 0 {
		t.Fatalf("%d waits registered after the waits returned, want none", n)
	}
}

// TestParkThenFinish: a parked wait is woken by a post, and Finish answers
// with it through the same registration, which it then closes; the reply
// leaves its delivery mark at the hub's time.
func TestParkThenFinish(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	w, err := h.Begin(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Waiters.AgentCount(bob.ID); n != 1 {
		t.Fatalf("%d waits of bob registered, want 1", n)
	}
	parked := make(chan struct{})
	go func() { w.Park(ctx); close(parked) }()
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "wake up"})
	select {
	case <-parked:
	case <-time.After(20 * time.Second):
		t.Fatal("the parked wait was not woken by a post")
	}
	delivered := h.Clock.Advance(time.Minute)
	r, err := w.Finish(ctx)
	if err != nil || len(r.Messages) != 1 || r.Messages[0].ID != m.ID || r.TimedOut {
		t.Fatalf("Finish after the park: %+v %v, want the message", r, err)
	}
	if n := h.Waiters.Count(); n != 0 {
		t.Fatalf("%d waits registered after Finish, want none", n)
	}
	h.runWatcher(t) // writes the delivery marks
	waitFor(t, "the delivery mark", func() bool {
		_, rs, err := h.Receipts.Get(ctx, alice, hub.FormatMessageID(m.ID))
		return err == nil && len(rs) == 1 && rs[0].DeliveredAt.Equal(delivered)
	})
}

// TestWaitTimesOutOnTheHubsClock: a parked wait ends when the hub's clock
// passes its timeout, not before, with a normal timed-out reply that
// reports how long it waited by that clock.
func TestWaitTimesOutOnTheHubsClock(t *testing.T) {
	h := newTestHub(t)
	bob := h.agents(t, "bob")[0]
	ctx := context.Background()
	ten := int32(10)
	type result struct {
		r   *hub.WaitResult
		err error
	}
	done := make(chan result, 1)
	timers := h.Clock.Timers()
	go func() {
		r, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: &ten})
		done <- result{r, err}
	}()
	waitFor(t, "the wait parked", func() bool { return h.Waiters.AgentCount(bob.ID) == 1 && h.Clock.Timers() > timers })
	h.Clock.Advance(9 * time.Second)
	select {
	case r := <-done:
		t.Fatalf("the wait ended 9 s into a 10 s timeout: %+v, %v", r.r, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	h.Clock.Advance(time.Second)
	select {
	case r := <-done:
		if r.err != nil || !r.r.TimedOut || r.r.Waited != 10*time.Second {
			t.Fatalf("the wait = %+v, %v; want timed out after 10 s", r.r, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the wait did not end when the clock passed its timeout")
	}
	if n := h.Waiters.Count(); n != 0 {
		t.Fatalf("%d waits registered after the timeout, want none", n)
	}
}
