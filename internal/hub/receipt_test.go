package hub_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestParsePriority(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want hub.Priority
		ok   bool
	}{
		{"", hub.PriorityNormal, true},
		{"low", hub.PriorityLow, true},
		{"normal", hub.PriorityNormal, true},
		{"HIGH", hub.PriorityHigh, true},
		{"urgent", hub.PriorityUrgent, true},
		{"critical", 0, false},
	} {
		got, err := hub.ParsePriority(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "low, normal, high, urgent") {
			t.Errorf("ParsePriority(%q) error %q does not name the allowed values", tt.in, err)
		}
	}
	if p, err := hub.CheckPriority(0); err != nil || p != hub.PriorityNormal {
		t.Errorf("CheckPriority(0) = %v, %v; want normal", p, err)
	}
	if _, err := hub.CheckPriority(9); hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), "low, normal, high, urgent") {
		t.Errorf("CheckPriority(9) = %v; want EINVALID naming the allowed values", err)
	}
}

func TestSortByPriority(t *testing.T) {
	t.Parallel()
	ms := []*hub.Message{
		{ID: 1, Priority: hub.PriorityNormal}, {ID: 2, Priority: hub.PriorityUrgent}, {ID: 3, Priority: hub.PriorityLow},
		{ID: 4, Priority: hub.PriorityHigh}, {ID: 5, Priority: hub.PriorityUrgent}, {ID: 6, Priority: hub.PriorityNormal},
	}
	hub.SortByPriority(ms)
	var got []int64
	for _, m := range ms {
		got = append(got, m.ID)
	}
	if want := []int64{2, 5, 4, 1, 6, 3}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestUrgentFirstCursorUnchanged: a wait and a list put urgent, then high
// messages first within their reply, and hand back the newest ID as the
// cursor, so the next call skips nothing.
func TestUrgentFirstCursorUnchanged(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	var want []int64
	for _, p := range []hub.Priority{hub.PriorityLow, 0, hub.PriorityUrgent, hub.PriorityHigh} {
		want = append(want, h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "p" + p.String(), Priority: p}).ID)
	}
	order := func(ms []*hub.Message) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	wantOrder := []int64{want[2], want[3], want[1], want[0]}
	zero := int32(0)
	r := h.mustWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero})
	if got := order(r.Messages); !slices.Equal(got, wantOrder) {
		t.Errorf("wait order %v, want %v", got, wantOrder)
	}
	if r.Cursor != want[3] {
		t.Errorf("wait cursor %d, want the newest ID %d", r.Cursor, want[3])
	}
	ms, cursor, _, err := h.List(ctx, bob, hub.ListRequest{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := order(ms); !slices.Equal(got, []int64{want[2], want[1], want[0]}) || cursor != want[2] {
		t.Errorf("list of 3: order %v cursor %d, want [%d %d %d] cursor %d", got, cursor, want[2], want[1], want[0], want[2])
	}
	ms, _, _, err = h.List(ctx, bob, hub.ListRequest{Limit: 3, AfterID: strconv.FormatInt(cursor, 10)})
	if err != nil || len(ms) != 1 || ms[0].ID != want[3] {
		t.Errorf("list after the cursor: %v %v, want only %d", order(ms), err, want[3])
	}
	_, err = h.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "x", Priority: 7})
	wantCode(t, "post with priority 7", err, hub.EINVALID)
}

// TestReceiptsFlow: delivered on the first reply that carries a message
// (not again), read when the cursor passes it, acknowledged once; who may
// see and acknowledge what.
func TestReceiptsFlow(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol", "eve")
	alice, bob, carol, eve := as[0], as[1], as[2], as[3]
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol"}, Body: "deploy at 5, ack please", Priority: hub.PriorityUrgent, AckRequired: true})
	id := strconv.FormatInt(m.ID, 10)
	receipts := func(caller *hub.Agent) map[string]hub.Receipt {
		t.Helper()
		got, rs, err := h.Receipts.Get(ctx, caller, id)
		if err != nil {
			t.Fatalf("Receipts: %v", err)
		}
		if got.Priority != hub.PriorityUrgent || !got.AckRequired {
			t.Errorf("message %+v: want urgent, ack required", got)
		}
		out := map[string]hub.Receipt{}
		for _, r := range rs {
			out[r.Agent] = r
		}
		return out
	}
	if rs := receipts(alice); len(rs) != 2 || !rs["bob"].DeliveredAt.IsZero() || rs["bob"].Read || !rs["bob"].AckedAt.IsZero() {
		t.Fatalf("before any read: %+v, want two empty receipts", rs)
	}

	tDelivered := h.Clock.Advance(time.Minute)
	zero := int32(0)
	h.mustWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero})
	h.Clock.Advance(time.Minute)
	h.mustWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero}) // again: not a new delivery
	tRead := h.Clock.Advance(time.Minute)
	if _, _, err := h.MarkRead(ctx, bob, ""); err != nil {
		t.Fatal(err)
	}
	tAck := h.Clock.Advance(time.Minute)
	acks, err := h.Acknowledge(ctx, bob, []string{id})
	if err != nil || len(acks) != 1 || !acks[0].First || !acks[0].AckedAt.Equal(tAck) {
		t.Fatalf("Acknowledge: %+v, %v; want first at %v", acks, err, tAck)
	}
	h.Clock.Advance(time.Minute)
	acks, err = h.Acknowledge(ctx, bob, []string{id, id})
	if err != nil || len(acks) != 1 || acks[0].First || !acks[0].AckedAt.Equal(tAck) {
		t.Errorf("Acknowledge again: %+v, %v; want the first time kept, First false", acks, err)
	}
	rs := receipts(alice)
	if b := rs["bob"]; !b.DeliveredAt.Equal(tDelivered) || !b.Read || !b.ReadAt.Equal(tRead) || !b.AckedAt.Equal(tAck) {
		t.Errorf("bob's receipt %+v, want delivered %v, read %v, acked %v", b, tDelivered, tRead, tAck)
	}
	if c := rs["carol"]; !c.DeliveredAt.IsZero() || c.Read || !c.AckedAt.IsZero() {
		t.Errorf("carol's receipt %+v, want nothing yet", c)
	}
	if admin := receipts(nil); !admin["bob"].AckedAt.Equal(tAck) {
		t.Errorf("the admin's view %+v differs", admin)
	}

	// Refusals: no leak of another agent's message, nothing written.
	_, err = h.Acknowledge(ctx, eve, []string{id})
	wantCode(t, "ack by an agent that did not receive it", err, hub.ENOTFOUND)
	_, err = h.Acknowledge(ctx, carol, []string{id, "999999"})
	wantCode(t, "ack naming an unknown ID", err, hub.ENOTFOUND)
	if c := receipts(alice)["carol"]; !c.AckedAt.IsZero() {
		t.Errorf("a refused call acknowledged %+v", c)
	}
	_, err = h.Acknowledge(ctx, bob, nil)
	wantCode(t, "ack of no ID", err, hub.EINVALID)
	_, err = h.Acknowledge(ctx, bob, []string{"abc"})
	wantCode(t, "ack of a malformed ID", err, hub.EINVALID)
	_, _, err = h.Receipts.Get(ctx, eve, id)
	wantCode(t, "receipts for a stranger", err, hub.ENOTFOUND)
	_, _, err = h.Receipts.Get(ctx, bob, id)
	wantCode(t, "receipts for a recipient", err, hub.EPERMISSION)
	_, _, err = h.Receipts.Get(ctx, nil, "999999")
	wantCode(t, "admin receipts of an unknown ID", err, hub.ENOTFOUND)
}

// TestAckOverdueNudge: a recipient that has not acknowledged in time gets
// one nudge (high priority, naming the message), however many ticks
// follow; one that acknowledged gets none.
func TestAckOverdueNudge(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]
	set := hub.DefaultScheduleSettings()
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol"}, Body: "ack please", AckRequired: true})
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "no ack needed"})
	if _, err := h.Acknowledge(ctx, carol, []string{strconv.FormatInt(m.ID, 10)}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := h.CheckAckOverdue(ctx, h.Clock.Advance(set.AckOverdue-time.Second), set); err != nil || n != 0 {
		t.Fatalf("before the limit: %d nudged, %v", n, err)
	}
	now := h.Clock.Advance(time.Second)
	if n, _, err := h.CheckAckOverdue(ctx, now, set); err != nil || n != 1 {
		t.Fatalf("at the limit: %d nudged, %v; want 1", n, err)
	}
	for range 3 {
		if n, _, err := h.CheckAckOverdue(ctx, h.Clock.Advance(time.Hour), set); err != nil || n != 0 {
			t.Fatalf("later ticks: %d nudged, %v; want 0 (once per message)", n, err)
		}
	}
	var nudges []*hub.Message
	for _, x := range h.inbox(t, bob) {
		if x.Kind == hub.KindNudge {
			nudges = append(nudges, x)
		}
	}
	if len(nudges) != 1 {
		t.Fatalf("bob got %d nudges, want 1", len(nudges))
	}
	n := nudges[0]
	if n.Priority != hub.PriorityHigh || !strings.Contains(n.Body, "#"+strconv.FormatInt(m.ID, 10)+" from alice") ||
		!strings.Contains(n.Body, "acknowledge_message") || !slices.Contains(n.Mentions, "bob") {
		t.Errorf("nudge %+v: want high priority, mentioning bob, naming the message and the tool", n)
	}
	for _, x := range h.inbox(t, carol) {
		if x.Kind == hub.KindNudge {
			t.Errorf("carol, who acknowledged, got a nudge: %q", x.Body)
		}
	}
}

// BenchmarkReadReceipts is what a read costs with receipts kept:
// "wait-new" is a peek that returns a newly posted message (its delivery
// mark is buffered for Run to write: no write on the reply path),
// "wait-again" one that returns it again (already delivered: nothing
// buffered), "markread" a read cursor move past one new message (the
// cursor update and one read mark, in one write).
//
//	go test -run '^$' -bench BenchmarkReadReceipts -benchtime 2000x ./internal/hub/
func BenchmarkReadReceipts(b *testing.B) {
	ctx := context.Background()
	zero := int32(0)
	setup := func(b *testing.B) (*testHub, *hub.Agent, *hub.Agent) {
		h := newTestHub(b)
		as := h.agents(b, "alice", "bob")
		return h, as[0], as[1]
	}
	b.Run("wait-new", func(b *testing.B) {
		h, alice, bob := setup(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "x"})
			after := strconv.FormatInt(m.ID-1, 10)
			b.StartTimer()
			if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero, AfterID: after}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wait-again", func(b *testing.B) {
		h, alice, bob := setup(b)
		m := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "x"})
		after := strconv.FormatInt(m.ID-1, 10)
		if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero, AfterID: after}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero, AfterID: after}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("markread", func(b *testing.B) {
		h, alice, bob := setup(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "x"})
			b.StartTimer()
			if _, _, err := h.MarkRead(ctx, bob, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDeliveryMarksWrittenByRun: a reply's delivery marks reach the store
// through the fallback watcher's loop, without a receipts read; once Run
// has returned (the hub stops while its servers finish their calls), a mark
// is written by the call that records it, and a confirmation acknowledged
// then is in the store.
func TestDeliveryMarksWrittenByRun(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	zero := int32(0)
	stored := func(id int64) hub.Receipt {
		var rs []hub.Receipt
		if err := h.DB.View(context.Background(), func(tx hub.Tx) (err error) { rs, err = tx.Receipts(id); return err }); err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 {
			t.Fatalf("message %d has %d receipts, want 1", id, len(rs))
		}
		return rs[0]
	}
	m1 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one"})
	h.mustWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: &zero})
	waitFor(t, "Run writes the delivery mark of a reply", func() bool { return !stored(m1.ID).DeliveredAt.IsZero() })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	m2 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "two"})
	h.mustWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: &zero, AfterID: strconv.FormatInt(m1.ID, 10)})
	if r := stored(m2.ID); r.InContextAt.IsZero() {
		t.Errorf("a reply after Run returned: receipt %+v, want in context as the reply returned", r)
	}
	m3 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "three"})
	if err := h.Receipts.Confirm(context.Background(), bob, []string{strconv.FormatInt(m3.ID, 10)}, "channel"); err != nil {
		t.Fatal(err)
	}
	if r := stored(m3.ID); r.InContextAt.IsZero() || r.Via != hub.ViaChannel {
		t.Errorf("a confirmation acknowledged after Run returned: receipt %+v, want in context via channel", r)
	}
}

// TestReceiptsReadWritesPendingMarks: a receipts read writes the delivery
// marks still pending first (here no Run writes them).
func TestReceiptsReadWritesPendingMarks(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	zero := int32(0)
	stored := func(id int64) bool {
		var rs []hub.Receipt
		if err := h.DB.View(context.Background(), func(tx hub.Tx) (err error) { rs, err = tx.Receipts(id); return err }); err != nil {
			t.Fatal(err)
		}
		return len(rs) == 1 && !rs[0].DeliveredAt.IsZero()
	}
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one"})
	h.mustWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: &zero})
	if stored(m.ID) {
		t.Fatal("a mark was written with no Run: the test does not see the buffer")
	}
	if _, rs, err := h.Receipts.Get(context.Background(), alice, strconv.FormatInt(m.ID, 10)); err != nil || rs[0].DeliveredAt.IsZero() {
		t.Fatalf("receipts read: %+v, %v; want the pending mark written first", rs, err)
	}
	if !stored(m.ID) {
		t.Error("the receipts read did not write the pending mark")
	}
}

// gatedStore holds its next write transaction, once armed, until release
// is closed.
type gatedStore struct {
	hub.Store
	armed   atomic.Bool
	held    chan struct{} // receives when the armed write is held
	release chan struct{}
}

func (s *gatedStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	if s.armed.CompareAndSwap(true, false) {
		s.held <- struct{}{}
		<-s.release
	}
	return s.Store.Update(ctx, fn)
}

// TestReceiptsWaitForMarksBeingWritten: a receipts read that finds no mark
// pending, because another flush took them and is still writing them,
// waits for that write instead of answering without them.
func TestReceiptsWaitForMarksBeingWritten(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	gs := &gatedStore{Store: h.DB, held: make(chan struct{}), release: make(chan struct{})}
	svc := h.over(t, gs)
	id := strconv.FormatInt(h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "ping"}).ID, 10)
	zero := int32(0)
	if _, err := svc.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: &zero}); err != nil {
		t.Fatal(err) // its reply's delivery mark is now pending
	}
	gs.armed.Store(true)
	first := make(chan error, 1)
	go func() { _, _, err := svc.Receipts.Get(ctx, alice, id); first <- err }() // takes the mark; its write is held
	<-gs.held
	type result struct {
		rs  []hub.Receipt
		err error
	}
	second := make(chan result, 1)
	go func() { _, rs, err := svc.Receipts.Get(ctx, alice, id); second <- result{rs, err} }()
	select {
	case r := <-second:
		t.Fatalf("a receipts read answered (%+v, %v) while the mark it must show was still being written", r.rs, r.err)
	case <-time.After(200 * time.Millisecond): // it waits, as it should
	}
	close(gs.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.err != nil || len(r.rs) != 1 || r.rs[0].DeliveredAt.IsZero() {
		t.Errorf("receipts once the mark is written: %+v, %v; want bob's delivery", r.rs, r.err)
	}
}

// TestInjectionDelivers: a hook's injection hands messages to the agent's
// session, so it is their first delivery; a later read keeps that time.
func TestInjectionDelivers(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "ack please", AckRequired: true})
	injected := h.Clock.Advance(time.Minute)
	if in, err := h.TakeInjection(ctx, bob, 0); err != nil || len(in.Messages) != 1 {
		t.Fatalf("TakeInjection: %+v, %v", in, err)
	}
	h.Clock.Advance(time.Minute)
	h.inbox(t, bob)
	_, rs, err := h.Receipts.Get(ctx, alice, strconv.FormatInt(m.ID, 10))
	if err != nil || len(rs) != 1 || !rs[0].DeliveredAt.Equal(injected) {
		t.Errorf("receipts %+v, %v: want delivered at the injection, %v", rs, err, injected)
	}
}
