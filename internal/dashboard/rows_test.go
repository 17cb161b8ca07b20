package dashboard

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// countedReads is a store that counts the batched reads of agents' rows.
type countedReads struct {
	hub.Store
	reads atomic.Int32
}

func (s *countedReads) View(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.View(ctx, func(tx hub.Tx) error { return fn(countedReadsTx{tx, s}) })
}

type countedReadsTx struct {
	hub.Tx
	s *countedReads
}

func (tx countedReadsTx) OverviewRows(all bool, ids []int64) ([]hub.OverviewRow, error) {
	tx.s.reads.Add(1)
	return tx.Tx.OverviewRows(all, ids)
}

// casterRig is a row caster over a hub on a SQLite file and a fake clock,
// with one stream's sink.
type casterRig struct {
	svc   *hub.Services
	clock *hub.FakeClock
	store *countedReads
	sink  *sink
	base  int // the clock's timers while the caster waits for a change
	// tokens are the agents' tokens by name.
	tokens map[string]string
}

// rowsOf writes overviews as the REST API does, in the parts the tests
// look at.
func rowsOf(os []hub.AgentOverview) []*hubv1.AgentOverview {
	out := make([]*hubv1.AgentOverview, len(os))
	for i, o := range os {
		seen := timestamppb.New(o.Health.LastSeenAt)
		out[i] = &hubv1.AgentOverview{
			Agent:       &hubv1.Agent{Name: o.Agent.Name, Presence: string(o.Health.Presence), LastSeenAt: seen},
			Health:      &hubv1.AgentHealth{Agent: o.Agent.Name, State: string(o.Health.Health.State), LastSeenAt: seen, EvaluatedAt: timestamppb.New(o.Health.EvaluatedAt)},
			UnreadCount: o.Unread,
		}
	}
	return out
}

func newCasterRig(t *testing.T, names ...string) (*casterRig, map[string]*hub.Agent) {
	t.Helper()
	ctx := context.Background()
	clock := hub.NewFakeClock(time.Date(2026, 12, 2, 6, 0, 5, 0, time.UTC))
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &countedReads{Store: db}
	cfg := hub.DefaultConfig()
	svc := hub.NewServices(hub.NewCore(st, clock, cfg, hub.NewWaiters(cfg.WaitLimits, clock)))
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	agents, tokens := map[string]*hub.Agent{}, map[string]string{}
	for _, n := range names {
		_, token, err := svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: n})
		if err != nil {
			t.Fatal(err)
		}
		if agents[n], err = svc.Agents.Authenticate(ctx, token); err != nil {
			t.Fatal(err)
		}
		tokens[n] = token
	}
	feed := svc.Core.Feed()
	sub, err := feed.Subscribe(hub.Principal{}, 0) // the stream's subscription: marks are gathered
	if err != nil {
		t.Fatal(err)
	}
	closing := make(chan struct{})
	c := newRowCaster(Options{Feed: feed, Watch: svc.Liveness.WatchOverviews(), Rows: rowsOf, Clock: clock}, closing)
	r := &casterRig{svc: svc, clock: clock, store: st, sink: c.join(), base: clock.Timers() + 1, tokens: tokens} // + the caster's ticker
	done := make(chan struct{})
	go func() { c.run(); close(done) }()
	t.Cleanup(func() { close(closing); <-done; sub.Close() })
	r.pass(t) // the first, which learns where things stand
	return r, agents
}

// pass lets the caster's gap run out once it waits in it: one pass.
func (r *casterRig) pass(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for r.clock.Timers() <= r.base {
		if time.Now().After(deadline) {
			t.Fatal("the caster never waited in its gap")
		}
		time.Sleep(time.Millisecond)
	}
	r.clock.Advance(rowGap)
}

// event is an "agents" event as the page reads it.
type event struct {
	Rows []struct {
		Agent struct {
			Name string `json:"name"`
		} `json:"agent"`
		Unread string `json:"unread_count"`
	} `json:"rows"`
	Gone []string `json:"gone"`
}

// next returns the next event of the sink.
func (r *casterRig) next(t *testing.T) event {
	t.Helper()
	select {
	case b := <-r.sink.c:
		const head = "event: agents\ndata: "
		var ev event
		if len(b) < len(head) || json.Unmarshal(b[len(head):], &ev) != nil {
			t.Fatalf("not an agents event: %q", b)
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event")
		return event{}
	}
}

// Rows changed many times within the gap are read once, in one read, and
// sent in one event, as soon as the gap runs out; a row whose change shows
// nothing (a call that moves its last-seen time within the minute) is not
// sent at all.
func TestRowCasterMergesChangesAndSkipsInvisibleOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, as := newCasterRig(t, "alice", "bob", "carol")
	feed := r.svc.Core.Feed()

	// Five posts to bob and carol and one to alice within one gap: one
	// read, one event, each row once with its unread.
	posted := r.clock.Now()
	if _, err := r.svc.Messages.Post(ctx, as["bob"], "", hub.PostRequest{To: []string{"alice"}, Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := r.svc.Messages.Post(ctx, as["alice"], "", hub.PostRequest{To: []string{"bob", "carol"}, Body: "news"}); err != nil {
			t.Fatal(err)
		}
	}
	r.store.reads.Store(0)
	r.pass(t)
	ev := r.next(t)
	if waited := r.clock.Now().Sub(posted); waited > rowGap {
		t.Errorf("the rows came %v after the posts on the hub's clock, want within the gap (%v)", waited, rowGap)
	}
	var got []string
	for _, row := range ev.Rows {
		got = append(got, row.Agent.Name+":"+row.Unread)
	}
	slices.Sort(got)
	if want := []string{"alice:1", "bob:5", "carol:5"}; !slices.Equal(got, want) {
		t.Errorf("rows of the event after 6 posts: %v, want %v", got, want)
	}
	if n := r.store.reads.Load(); n != 1 {
		t.Errorf("6 posts to 3 agents: %d reads of rows, want 1", n)
	}

	// alice calls again 10 s later (a heartbeat): her last-seen time moves
	// within the minute, which the row does not show; then bob gets a
	// post. The next event has bob's row only.
	r.clock.Advance(10 * time.Second)
	if _, err := r.svc.Agents.Authenticate(ctx, r.tokens["alice"]); err != nil {
		t.Fatal(err)
	}
	feed.AgentsChanged(as["alice"].ID)
	r.pass(t)
	if _, err := r.svc.Messages.Post(ctx, as["carol"], "", hub.PostRequest{To: []string{"bob"}, Body: "more"}); err != nil {
		t.Fatal(err)
	}
	r.pass(t)
	ev = r.next(t)
	got = got[:0]
	for _, row := range ev.Rows {
		got = append(got, row.Agent.Name+":"+row.Unread)
	}
	if want := []string{"bob:6"}; !slices.Equal(got, want) {
		t.Errorf("after alice's heartbeat and a post to bob: rows %v, want %v only", got, want)
	}
}
