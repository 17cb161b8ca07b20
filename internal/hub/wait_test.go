package hub_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// longWait is a wait timeout that a test never reaches: a wait that returns
// did so because it was woken, not because it timed out.
var longWait = seconds(30)

// waitCall is the outcome of a Wait run in its own goroutine.
type waitCall struct {
	res *hub.WaitResult
	err error
}

// startWait runs Wait in a goroutine.
func (h *testHub) startWait(ctx context.Context, a *hub.Agent, req hub.WaitRequest) <-chan waitCall {
	c := make(chan waitCall, 1)
	go func() {
		res, err := h.Wait(ctx, a, req)
		c <- waitCall{res, err}
	}()
	return c
}

// parkedWait starts a wait and returns once it is parked.
func (h *testHub) parkedWait(tb testing.TB, ctx context.Context, a *hub.Agent, req hub.WaitRequest) <-chan waitCall {
	tb.Helper()
	n := h.Waiters.AgentCount(a.ID)
	c := h.startWait(ctx, a, req)
	waitFor(tb, a.Name+"'s wait is parked", func() bool { return h.Waiters.AgentCount(a.ID) > n })
	return c
}

// result waits for a wait's outcome, well before any timeout a test sets.
func result(tb testing.TB, c <-chan waitCall) waitCall {
	tb.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(20 * time.Second):
		tb.Fatal("the wait did not return within 20 s (it should have been woken long before its 30 s timeout)")
		return waitCall{}
	}
}

// mustWait calls Wait and fails the test on error.
func (h *testHub) mustWait(tb testing.TB, ctx context.Context, a *hub.Agent, req hub.WaitRequest) *hub.WaitResult {
	tb.Helper()
	r := result(tb, h.startWait(ctx, a, req))
	if r.err != nil {
		tb.Fatalf("Wait(%+v): %v", req, r.err)
	}
	return r.res
}

func TestWaitReturnsAtOnce(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	var ids []int64
	for i := range 3 {
		ids = append(ids, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprint("m", i)}).ID)
	}
	if _, _, err := h.MarkRead(ctx, bob, fmt.Sprint(ids[0])); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		req        hub.WaitRequest
		want       []int64
		wantCursor int64
	}{
		{"unread", hub.WaitRequest{TimeoutSeconds: longWait}, ids[1:], ids[2]},
		{"unread, limited", hub.WaitRequest{TimeoutSeconds: longWait, Limit: 1}, ids[1:2], ids[1]},
		{"after_id before the read cursor", hub.WaitRequest{TimeoutSeconds: longWait, AfterID: "0"}, ids, ids[2]},
		{"after_id", hub.WaitRequest{TimeoutSeconds: longWait, AfterID: fmt.Sprint(ids[1])}, ids[2:], ids[2]},
		{"default timeout", hub.WaitRequest{}, ids[1:], ids[2]},
		{"peek", hub.WaitRequest{TimeoutSeconds: seconds(0)}, ids[1:], ids[2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := h.mustWait(t, ctx, bob, tt.req)
			if got := msgIDs(r.Messages); !slices.Equal(got, tt.want) {
				t.Errorf("messages %v, want %v", got, tt.want)
			}
			if r.TimedOut || r.Cursor != tt.wantCursor {
				t.Errorf("timed_out %v cursor %d, want false and %d", r.TimedOut, r.Cursor, tt.wantCursor)
			}
			if r.Status == nil || r.Status.Agent != "bob" || r.Status.Unread != 2 {
				t.Errorf("status = %+v, want bob's with 2 unread", r.Status)
			}
		})
	}
}

// A peek never parks: with nothing to return it times out at once, and it
// works even when the wait limits are used up.
func TestWaitPeek(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 1, Total: 1} })
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "x"})
	if _, _, err := h.MarkRead(ctx, bob, ""); err != nil {
		t.Fatal(err)
	}
	parkCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	parked := h.parkedWait(t, parkCtx, bob, hub.WaitRequest{TimeoutSeconds: longWait})

	r, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0)})
	if err != nil {
		t.Fatalf("peek with the limit used up: %v", err)
	}
	if !r.TimedOut || len(r.Messages) != 0 || r.Cursor != m.ID {
		t.Errorf("peek = timed_out %v, %d messages, cursor %d; want timed_out, none, cursor %d", r.TimedOut, len(r.Messages), r.Cursor, m.ID)
	}
	if r.Status == nil || r.Status.Unread != 0 {
		t.Errorf("peek status = %+v, want 0 unread", r.Status)
	}
	cancel()
	result(t, parked)
}

func TestWaitTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      func(*hub.Config)
		req      hub.WaitRequest
		deadline time.Duration // of the caller's context, if > 0
	}{
		{"default", func(c *hub.Config) { c.WaitDefault = 100 * time.Millisecond }, hub.WaitRequest{}, 0},
		{"clamped to the maximum", func(c *hub.Config) { c.WaitMax = 200 * time.Millisecond }, hub.WaitRequest{TimeoutSeconds: seconds(3600)}, 0},
		{"one second", nil, hub.WaitRequest{TimeoutSeconds: seconds(1)}, 0},
		{"before the caller's deadline", nil, hub.WaitRequest{TimeoutSeconds: seconds(3600)}, 1500 * time.Millisecond},
		{"deadline inside the margin", nil, hub.WaitRequest{TimeoutSeconds: seconds(3600)}, 300 * time.Millisecond},
		{"with after_id", func(c *hub.Config) { c.WaitMax = 100 * time.Millisecond }, hub.WaitRequest{AfterID: "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []func(*hub.Config)
			if tt.cfg != nil {
				opts = append(opts, tt.cfg)
			}
			h := newRealTimeHub(t, opts...) // the caller's deadline is real time
			bob, _ := h.agent(t, "bob")
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			r := h.mustWait(t, ctx, bob, tt.req)
			if ctx.Err() != nil {
				t.Errorf("the wait returned after the caller's deadline (%v), want a little before it", ctx.Err())
			}
			if !r.TimedOut || len(r.Messages) != 0 {
				t.Errorf("timed_out %v with %d messages, want timed_out and none", r.TimedOut, len(r.Messages))
			}
			if r.Status == nil {
				t.Error("a timed-out wait has no status")
			}
			if tt.req.AfterID != "" && r.Cursor != 0 {
				t.Errorf("cursor = %d, want the after_id 0 back", r.Cursor)
			}
			if got := h.Waiters.Count(); got != 0 {
				t.Errorf("parked waits after the timeout = %d, want 0", got)
			}
		})
	}
}

func TestWaitBadInput(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	bob, _ := h.agent(t, "bob")
	tests := []struct {
		name string
		req  hub.WaitRequest
	}{
		{"negative timeout", hub.WaitRequest{TimeoutSeconds: seconds(-1)}},
		{"malformed after_id", hub.WaitRequest{AfterID: "abc"}},
		{"negative after_id", hub.WaitRequest{AfterID: "-3"}},
		{"fractional after_id", hub.WaitRequest{AfterID: "1.5"}},
		{"negative limit", hub.WaitRequest{Limit: -2}},
	}
	for _, tt := range tests {
		r := result(t, h.startWait(context.Background(), bob, tt.req))
		wantCode(t, tt.name, r.err, hub.EINVALID)
	}
	if got := h.Waiters.Count(); got != 0 {
		t.Errorf("parked waits after refused waits = %d, want 0", got)
	}
}

// The in-process notifier: a post from another goroutine wakes the wait.
func TestWaitWakesOnPost(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]

	c := h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	st, err := h.Status(ctx, carol)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(st.Waiting, "bob") {
		t.Errorf("Waiting = %v while bob is parked, want bob in it", st.Waiting)
	}
	// A message for someone else does not end bob's wait.
	h.post(t, alice, hub.PostRequest{To: []string{"carol"}, Body: "not for bob"})
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "wake up"})
	r := result(t, c)
	if r.err != nil {
		t.Fatalf("Wait: %v", r.err)
	}
	if got := msgIDs(r.res.Messages); !slices.Equal(got, []int64{m.ID}) || r.res.TimedOut || r.res.Cursor != m.ID {
		t.Errorf("woken wait = %v timed_out %v cursor %d, want [%d], false, %d", got, r.res.TimedOut, r.res.Cursor, m.ID, m.ID)
	}
	if r.res.Status.Unread != 1 {
		t.Errorf("status unread = %d, want 1", r.res.Status.Unread)
	}
	if got := h.Waiters.Count(); got != 0 {
		t.Errorf("parked waits after the wake-up = %d, want 0", got)
	}

	// With the cursor: the next wait parks again and wakes on a channel post.
	if _, err := h.JoinChannel(ctx, bob, "#ops"); err != nil {
		t.Fatal(err)
	}
	c = h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait, AfterID: fmt.Sprint(r.res.Cursor)})
	m2 := h.post(t, alice, hub.PostRequest{Channel: "#ops", Body: "on ops"})
	r = result(t, c)
	if r.err != nil || !slices.Equal(msgIDs(r.res.Messages), []int64{m2.ID}) {
		t.Errorf("wait after the cursor = %v, %v; want [%d]", msgIDs(r.res.Messages), r.err, m2.ID)
	}

	// A system message (a nudge) wakes too.
	c = h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait, AfterID: fmt.Sprint(m2.ID)})
	if _, err := h.Post(ctx, nil, hub.SenderOrchestrator, hub.PostRequest{To: []string{"bob"}, Body: "@bob no activity", Kind: hub.KindNudge}); err != nil {
		t.Fatal(err)
	}
	r = result(t, c)
	if r.err != nil || len(r.res.Messages) != 1 || r.res.Messages[0].Kind != hub.KindNudge || !r.res.Messages[0].MentionsYou {
		t.Errorf("wait woken by a nudge = %+v, %v", r.res, r.err)
	}
}

// The fallback watcher wakes waits for messages another process wrote to
// the same database file: here a second store handle writes directly.
func TestWaitWakesThroughFallbackWatcher(t *testing.T) {
	t.Parallel()
	h := newRealTimeHub(t, func(c *hub.Config) { c.PollInterval = 20 * time.Millisecond })
	h.runWatcher(t)
	ctx := context.Background()
	bob, _ := h.agent(t, "bob")

	other, err := sqlite.Open(ctx, h.Path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	write := func(body string) int64 {
		t.Helper()
		m := &hub.Message{From: "elsewhere", To: []string{"bob"}, Body: body, Kind: hub.KindMessage, CreatedAt: coreT0}
		if err := other.Update(ctx, func(tx hub.Tx) error {
			return tx.InsertMessage(m, []hub.Delivery{{AgentID: bob.ID}})
		}); err != nil {
			t.Fatalf("write through the second handle: %v", err)
		}
		return m.ID
	}

	var cursor int64
	for i := range 3 {
		c := h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait, AfterID: fmt.Sprint(cursor)})
		id := write(fmt.Sprint("from another process ", i))
		r := result(t, c)
		if r.err != nil {
			t.Fatalf("round %d: Wait: %v", i, r.err)
		}
		if got := msgIDs(r.res.Messages); !slices.Equal(got, []int64{id}) || r.res.TimedOut {
			t.Fatalf("round %d: woken wait = %v timed_out %v, want [%d]", i, got, r.res.TimedOut, id)
		}
		cursor = r.res.Cursor
	}
}

// PollOnly (the benchmark's imitation of the seed) finds messages by polling.
func TestWaitPollOnly(t *testing.T) {
	t.Parallel()
	h := newRealTimeHub(t, func(c *hub.Config) { c.PollOnly = true; c.PollInterval = 10 * time.Millisecond })
	as := h.agents(t, "alice", "bob")
	c := h.parkedWait(t, context.Background(), as[1], hub.WaitRequest{TimeoutSeconds: longWait})
	m := h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "x"})
	r := result(t, c)
	if r.err != nil || !slices.Equal(msgIDs(r.res.Messages), []int64{m.ID}) {
		t.Errorf("poll-only wait = %v, %v; want [%d]", r.res, r.err, m.ID)
	}
}

func TestWaitLimits(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 2, Total: 3} })
	as := h.agents(t, "alice", "bob", "carol", "dave")
	alice, bob, carol, dave := as[0], as[1], as[2], as[3]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelFirst, cancelFirstFn := context.WithCancel(ctx)
	first := h.parkedWait(t, cancelFirst, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	second := h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})

	r := result(t, h.startWait(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait}))
	wantCode(t, "third wait of bob", r.err, hub.EEXHAUSTED)
	third := h.parkedWait(t, ctx, carol, hub.WaitRequest{TimeoutSeconds: longWait})
	r = result(t, h.startWait(ctx, dave, hub.WaitRequest{TimeoutSeconds: longWait}))
	wantCode(t, "a wait past the total", r.err, hub.EEXHAUSTED)

	// Ending a wait frees its slot at once.
	cancelFirstFn()
	if r := result(t, first); !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled wait = %v, want %v", r.err, context.Canceled)
	}
	fourth := h.parkedWait(t, ctx, dave, hub.WaitRequest{TimeoutSeconds: longWait})

	// A post wakes every wait of the agent.
	h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol", "dave"}, Body: "all"})
	for i, c := range []<-chan waitCall{second, third, fourth} {
		if r := result(t, c); r.err != nil || len(r.res.Messages) != 1 {
			t.Errorf("wait %d after the post: %+v, %v", i, r.res, r.err)
		}
	}
	if got := h.Waiters.Count(); got != 0 {
		t.Errorf("parked waits = %d, want 0", got)
	}
}

// A cancelled wait returns the context's error and frees its waiter at once.
func TestWaitCancelFreesWaiter(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 100, Total: 100} })
	bob, _ := h.agent(t, "bob")
	const n = 50
	ctx, cancel := context.WithCancel(context.Background())
	cs := make([]<-chan waitCall, n)
	for i := range cs {
		cs[i] = h.startWait(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	}
	waitFor(t, "every wait is parked", func() bool { return h.Waiters.Count() == n })
	cancel()
	for _, c := range cs {
		if r := result(t, c); !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled wait = %v, want %v", r.err, context.Canceled)
		}
	}
	if got := h.Waiters.Count(); got != 0 {
		t.Errorf("parked waits after every wait returned = %d, want 0", got)
	}
}

// Disabling an agent ends its parked waits.
func TestWaitEndsWhenAgentDisabled(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	bob, _ := h.agent(t, "bob")
	c := h.parkedWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: longWait})
	if _, err := h.SetAgentDisabled(context.Background(), "bob", true); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "wait of a disabled agent", result(t, c).err, hub.EPERMISSION)
}

// Register before check: however a post races a wait, the wait returns the
// post (a lost wake-up would park it until its 30 s timeout).
func TestWaitNoLostWakeUp(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	ctx := context.Background()
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	var cursor int64
	for i := range rounds {
		c := h.startWait(ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait, AfterID: fmt.Sprint(cursor)})
		var m *hub.Message
		var wg sync.WaitGroup
		wg.Go(func() {
			var err error
			if m, err = h.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprint("round ", i)}); err != nil {
				t.Error(err)
			}
		})
		r := result(t, c)
		wg.Wait()
		if r.err != nil {
			t.Fatalf("round %d: Wait: %v", i, r.err)
		}
		if r.res.TimedOut || !containsID(r.res.Messages, m.ID) {
			t.Fatalf("round %d: wait = %v timed_out %v, want message %d", i, msgIDs(r.res.Messages), r.res.TimedOut, m.ID)
		}
		cursor = m.ID
	}
}

type fakeMetrics struct {
	mu       sync.Mutex
	posted   int
	ended    int
	timedOut int
}

func (m *fakeMetrics) MessagePosted(string) { m.mu.Lock(); m.posted++; m.mu.Unlock() }
func (m *fakeMetrics) WaitEnded(_ time.Duration, timedOut bool, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended++
	if timedOut {
		m.timedOut++
	}
}

func (m *fakeMetrics) UsageRecorded(string, hub.UsageCounts) {}

func TestWaitMetrics(t *testing.T) {
	t.Parallel()
	fm := &fakeMetrics{}
	h := newTestHub(t, func(c *hub.Config) { c.Metrics = fm })
	as := h.agents(t, "alice", "bob")
	h.mustWait(t, context.Background(), as[1], hub.WaitRequest{TimeoutSeconds: seconds(0)})
	h.post(t, as[0], hub.PostRequest{To: []string{"bob"}, Body: "x"})
	h.mustWait(t, context.Background(), as[1], hub.WaitRequest{TimeoutSeconds: longWait})
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if fm.posted != 1 || fm.ended != 2 || fm.timedOut != 1 {
		t.Errorf("metrics: posted %d, waits ended %d, timed out %d; want 1, 2, 1", fm.posted, fm.ended, fm.timedOut)
	}
}
