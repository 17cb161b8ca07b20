package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// names returns the agents of rows, sorted.
func names(rows []hub.AgentOverview) []string {
	var out []string
	for _, o := range rows {
		out = append(out, o.Agent.Name)
	}
	slices.Sort(out)
	return out
}

// The overview watch returns the rows that changed, and only those: none
// at first (it learns where things stand); then a delivery's recipient, an agent named by an admin
// call (or its name when it is gone), an agent whose presence moved with
// time or a parked wait, an agent the health sweep recorded an event for;
// nothing when nothing changed.
func TestOverviewWatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	a, _ := h.agent(t, "alice")
	b, _ := h.agent(t, "bob")
	_, carol := h.agent(t, "carol")
	sub, err := h.Feed().Subscribe(hub.Principal{}, 0) // marks are gathered while a page subscribes
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	w := h.WatchOverviews()
	next := func(scan bool) hub.OverviewChanges {
		t.Helper()
		ch, err := w.Next(ctx, false, scan)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}

	if ch := next(false); ch.All || len(ch.Rows) != 0 {
		t.Fatalf("first Next: all %v rows %v, want nothing", ch.All, names(ch.Rows))
	}
	if ch := next(true); ch.All || len(ch.Rows) != 0 || len(ch.Gone) != 0 {
		t.Fatalf("nothing changed: all %v rows %v gone %v, want nothing", ch.All, names(ch.Rows), ch.Gone)
	}

	h.post(t, a, hub.PostRequest{To: []string{"bob"}, Body: "hi"})
	ch := next(false)
	if !slices.Equal(names(ch.Rows), []string{"bob"}) || ch.Rows[0].Unread != 1 {
		t.Fatalf("after a post to bob: rows %v, want bob with 1 unread", names(ch.Rows))
	}

	h.Feed().AgentNamed("carol")
	h.Feed().AgentNamed("ghost")
	ch = next(false)
	if !slices.Equal(names(ch.Rows), []string{"carol"}) || !slices.Equal(ch.Gone, []string{"ghost"}) {
		t.Fatalf("admin calls naming carol and ghost: rows %v gone %v, want carol and gone ghost", names(ch.Rows), ch.Gone)
	}

	// Time: alice's last call ages into idle; bob parks a wait; carol,
	// who calls again, stays active.
	h.Clock.Advance(3 * time.Minute)
	h.auth(t, carol)
	wt, err := h.Waiters.Register(b.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ch := next(false); len(ch.Rows) != 0 {
		t.Errorf("without a scan: rows %v, want none", names(ch.Rows))
	}
	ch = next(true)
	if got := names(ch.Rows); !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("scan after alice went idle and bob parked: rows %v, want alice and bob", got)
	}
	wt.Close()

	// The health sweep: 3 + 10 minutes without activity is an anomaly for
	// all three, recorded as events.
	h.Clock.Advance(10 * time.Minute)
	if _, _, _, err := h.SweepHealth(ctx, h.Clock.Now(), 100); err != nil {
		t.Fatal(err)
	}
	ch = next(true)
	if got := names(ch.Rows); !slices.Equal(got, []string{"alice", "bob", "carol"}) {
		t.Errorf("after the sweep: rows %v, want the three", got)
	}
	for _, o := range ch.Rows {
		if o.Health.Health.State != hub.HealthAnomaly {
			t.Errorf("%s: health %s, want anomaly", o.Agent.Name, o.Health.Health.State)
		}
	}

	h.Feed().AllAgentsChanged()
	if ch := next(false); !ch.All || len(ch.Rows) != 3 {
		t.Errorf("after AllAgentsChanged: all %v, %d rows, want every row", ch.All, len(ch.Rows))
	}
	if ch, err := w.Next(ctx, true, false); err != nil || !ch.All || len(ch.Rows) != 3 {
		t.Errorf("Next asked for all: all %v, %d rows (%v), want every row", ch.All, len(ch.Rows), err)
	}
}

// Without a subscriber the feed gathers nothing: a delivery costs no mark.
func TestOverviewWatchIdleWithoutPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	a, _ := h.agent(t, "alice")
	h.agent(t, "bob")
	w := h.WatchOverviews()
	if _, err := w.Next(ctx, false, false); err != nil {
		t.Fatal(err)
	}
	h.post(t, a, hub.PostRequest{To: []string{"bob"}, Body: "hi"})
	h.Feed().AgentNamed("alice")
	ch, err := w.Next(ctx, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Rows) != 0 || len(ch.Gone) != 0 {
		t.Errorf("no page subscribed: rows %v gone %v, want nothing gathered", names(ch.Rows), ch.Gone)
	}
}

// A row changes when a path opens or runs out, its presence unchanged: a
// hook's call makes the agent reachable, and five minutes later (the hook
// path's window) unreachable, while it keeps calling.
func TestOverviewWatchSeesReachability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	bob, token := h.agent(t, "bob")
	sub, err := h.Feed().Subscribe(hub.Principal{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	w := h.WatchOverviews()
	scan := func() []string {
		t.Helper()
		ch, err := w.Next(ctx, false, true)
		if err != nil {
			t.Fatal(err)
		}
		return names(ch.Rows)
	}
	scan() // learns where things stand

	if _, err := h.Injections.TakeInjection(ctx, bob, 0); err != nil {
		t.Fatal(err)
	}
	if got := scan(); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("after bob's hook ran: rows %v, want bob (reachable now)", got)
	}
	h.Clock.Advance(2 * time.Minute)
	h.auth(t, token)
	if got := scan(); len(got) != 0 {
		t.Fatalf("bob active and reachable as before: rows %v, want none", got)
	}
	h.Clock.Advance(3*time.Minute + time.Second)
	h.auth(t, token)
	if h.Liveness.ReachOf(bob).Reachable {
		t.Fatal("bob still reachable 5 min after his hook ran: the test needs the hook path's window")
	}
	if got := scan(); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("bob's hook path ran out: rows %v, want bob (unreachable now)", got)
	}
}

// overviewReads is a store that counts the reads of agents' rows of its
// snapshots: one agent at a time, or in one go (OverviewRows).
type overviewReads struct {
	hub.Store
	one, batched atomic.Int32
}

func (s *overviewReads) View(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.View(ctx, func(tx hub.Tx) error { return fn(overviewReadsTx{tx, s}) })
}

type overviewReadsTx struct {
	hub.Tx
	s *overviewReads
}

func (tx overviewReadsTx) AgentByID(id int64) (*hub.Agent, error) {
	tx.s.one.Add(1)
	return tx.Tx.AgentByID(id)
}

func (tx overviewReadsTx) LivenessState(id int64) (*hub.LivenessState, error) {
	tx.s.one.Add(1)
	return tx.Tx.LivenessState(id)
}

func (tx overviewReadsTx) InboxCounts(id, after int64) (int64, int64, int64, error) {
	tx.s.one.Add(1)
	return tx.Tx.InboxCounts(id, after)
}

func (tx overviewReadsTx) OverviewRows(all bool, ids []int64) ([]hub.OverviewRow, error) {
	tx.s.batched.Add(1)
	return tx.Tx.OverviewRows(all, ids)
}

// The rows that changed, however many and however often each changed, are
// read in one go, as is every row of the overviews; what the rows say is
// what the reads of one agent say.
func TestOverviewWatchReadsChangedRowsInOneRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newTestHub(t)
	st := &overviewReads{Store: h.DB}
	svc := h.over(t, st)
	sender, _ := h.agent(t, "sender")
	var to []string
	for i := range 20 {
		name := fmt.Sprintf("agent-%02d", i)
		h.agent(t, name)
		to = append(to, name)
	}
	sub, err := svc.Feed().Subscribe(hub.Principal{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	w := svc.WatchOverviews()
	if _, err := w.Next(ctx, false, false); err != nil {
		t.Fatal(err)
	}
	for range 3 { // three posts to each: every row changes three times
		if _, err := svc.Post(ctx, sender, "", hub.PostRequest{To: to, Body: "news"}); err != nil {
			t.Fatal(err)
		}
	}
	st.one.Store(0)
	st.batched.Store(0)
	ch, err := w.Next(ctx, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if one, batched := st.one.Load(), st.batched.Load(); one != 0 || batched != 1 {
		t.Errorf("20 rows changed 3 times each: %d reads of one agent and %d of many, want 0 and 1", one, batched)
	}
	if got := names(ch.Rows); !slices.Equal(got, to) {
		t.Fatalf("rows %v, want the 20 recipients once each", got)
	}
	for _, o := range ch.Rows {
		if o.Unread != 3 || o.Health == nil || o.Health.Health.State != hub.HealthHealthy {
			t.Errorf("%s: %d unread, health %+v; want 3 and healthy", o.Agent.Name, o.Unread, o.Health)
		}
	}

	st.one.Store(0)
	st.batched.Store(0)
	all, err := svc.AgentOverviews(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if one, batched := st.one.Load(), st.batched.Load(); one != 0 || batched != 1 {
		t.Errorf("every overview: %d reads of one agent and %d of many, want 0 and 1", one, batched)
	}
	if len(all) != 21 || all[0].Agent.Name != "agent-00" || all[20].Agent.Name != "sender" || all[0].Unread != 3 {
		t.Errorf("every overview: %d rows, first %s with %d unread; want 21 by name", len(all), all[0].Agent.Name, all[0].Unread)
	}
}
