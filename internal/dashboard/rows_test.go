package dashboard

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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

// eventRow is a row of an "agents" event, whole or a change, in the parts
// the tests look at.
type eventRow struct {
	Agent struct {
		Name string `json:"name"`
	} `json:"agent"`
	Unread string `json:"unread_count"`
}

// event is an "agents" event as the page reads it.
type event struct {
	Rows    []eventRow `json:"rows"`
	Changes []struct {
		Row     eventRow `json:"row"`
		Cleared []string `json:"cleared"`
	} `json:"changes"`
	Gone []string `json:"gone"`
}

// sent returns the event's rows and changes as name:unread, sorted.
func (ev event) sent() []string {
	var out []string
	for _, r := range ev.Rows {
		out = append(out, r.Agent.Name+":"+r.Unread)
	}
	for _, c := range ev.Changes {
		out = append(out, c.Row.Agent.Name+":"+c.Row.Unread)
	}
	slices.Sort(out)
	return out
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
	if got, want := ev.sent(), []string{"alice:1", "bob:5", "carol:5"}; !slices.Equal(got, want) || len(ev.Rows) != 3 {
		t.Errorf("rows of the event after 6 posts: %v (%d whole), want %v, whole", got, len(ev.Rows), want)
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
	if got, want := ev.sent(), []string{"bob:6"}; !slices.Equal(got, want) || len(ev.Changes) != 1 {
		t.Errorf("after alice's heartbeat and a post to bob: rows %v (%d changes), want %v only, a change", got, len(ev.Changes), want)
	}
}

// merge applies an "agents" event to the rows a page holds, as roster.js
// does: a whole row replaces the held one, a change's fields go into it
// (the agent's and the health's field by field) and its cleared fields
// leave it.
func merge(t *testing.T, held map[string]map[string]any, data []byte) {
	t.Helper()
	var ev struct {
		Rows    []map[string]any `json:"rows"`
		Changes []struct {
			Row     map[string]any `json:"row"`
			Cleared []string       `json:"cleared"`
		} `json:"changes"`
		Gone []string `json:"gone"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("agents event %s: %v", data, err)
	}
	name := func(r map[string]any) string { return r["agent"].(map[string]any)["name"].(string) }
	for _, r := range ev.Rows {
		held[name(r)] = r
	}
	for _, c := range ev.Changes {
		r, ok := held[name(c.Row)]
		if !ok {
			t.Fatalf("a change of %s, whose row the page does not hold", name(c.Row))
		}
		for k, v := range c.Row {
			sub, isObj := v.(map[string]any)
			into, heldObj := r[k].(map[string]any)
			if k != "agent" && k != "health" || !isObj || !heldObj {
				r[k] = v
				continue
			}
			maps.Copy(into, sub)
		}
		for _, f := range c.Cleared {
			if a, b, ok := strings.Cut(f, "."); ok {
				delete(r[a].(map[string]any), b)
			} else {
				delete(r, f)
			}
		}
	}
	for _, n := range ev.Gone {
		delete(held, n)
	}
}

// shown is a row's JSON as a page shows it: last-seen times to the minute,
// since_last (counted by the page from the beat) left out.
func shown(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch {
			case k == "since_last":
			case k == "last_seen_at":
				out[k] = x.(string)[:len("2006-01-02T15:04")]
			default:
				out[k] = shown(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shown(x)
		}
		return out
	}
	return v
}

// A page that merges the changes holds what a full read would give it
// (but for last-seen times within the minute), through fields that are
// set, changed and cleared, nested ones and lists among them; a call that
// moves only a last-seen time within the minute sends nothing.
func TestRowChangesMergeIntoTheWholeRow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 6, 0, 5, 0, time.UTC)
	ts := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(t0.Add(d)) }
	row := &hubv1.AgentOverview{
		Agent: &hubv1.Agent{Name: "alice", Role: "coder", Presence: "active", Health: "healthy", LastSeenAt: ts(0), LastInteractionBeat: 40, SinceLast: 2,
			Reachable: true, Project: "default", Paths: []*hubv1.DeliveryPath{{Kind: "wait", LastSeenAt: ts(0), Live: true}}},
		Health: &hubv1.AgentHealth{Agent: "alice", State: "healthy", Presence: "active", LastSeenAt: ts(0), LastActivityAt: ts(0),
			DeepWork: &hubv1.DeepWork{PlannedActivity: "parser"}, EvaluatedAt: ts(0)},
		UnreadCount: 4, MentionCount: 1, ParkedWaits: 1,
	}
	var cur *hubv1.AgentOverview
	c := newRowCaster(Options{Rows: func([]hub.AgentOverview) []*hubv1.AgentOverview {
		return []*hubv1.AgentOverview{proto.Clone(cur).(*hubv1.AgentOverview)} // a fresh row per read, as the REST API's
	}}, make(chan struct{}))
	page := map[string]map[string]any{}
	at := time.Duration(0)
	steps := []struct {
		what   string
		change func(r *hubv1.AgentOverview)
		sends  bool
	}{
		{"the first row", func(r *hubv1.AgentOverview) {}, true},
		{"a post", func(r *hubv1.AgentOverview) { r.UnreadCount, r.MentionCount = 5, 2 }, true},
		{"a heartbeat within the minute", func(r *hubv1.AgentOverview) {
			r.Agent.LastSeenAt, r.Health.LastSeenAt, r.Agent.Paths[0].LastSeenAt, r.Agent.SinceLast = ts(20*time.Second), ts(20*time.Second), ts(20*time.Second), 0
		}, false},
		{"mark read, deep work ends", func(r *hubv1.AgentOverview) {
			r.UnreadCount, r.MentionCount, r.Health.DeepWork, r.Agent.LastInteractionBeat = 0, 0, nil, 44
		}, true},
		{"the next minute, a second path, a finding", func(r *hubv1.AgentOverview) {
			r.Agent.LastSeenAt, r.Health.LastSeenAt = ts(time.Minute), ts(time.Minute)
			r.Agent.Paths = append(r.Agent.Paths, &hubv1.DeliveryPath{Kind: "hook", LastSeenAt: ts(time.Minute), Live: true})
			r.Health.State, r.Agent.Health = "warning", "warning"
			r.Health.Findings = []*hubv1.Finding{{Kind: "inactivity_warning", Severity: "warning", Since: ts(0), Text: "quiet for 20m"}}
		}, true},
		{"no path, no parked wait", func(r *hubv1.AgentOverview) { r.Agent.Paths, r.Agent.Reachable, r.ParkedWaits = nil, false, 0 }, true},
		{"disabled", func(r *hubv1.AgentOverview) { r.Agent.Disabled, r.Agent.DisabledAt = true, ts(time.Minute) }, true},
		{"disabled, read again", func(r *hubv1.AgentOverview) {}, false},
		{"enabled again", func(r *hubv1.AgentOverview) { r.Agent.Disabled, r.Agent.DisabledAt = false, nil }, true},
	}
	cur = row
	for _, s := range steps {
		at += time.Second
		cur = proto.Clone(cur).(*hubv1.AgentOverview)
		s.change(cur)
		cur.Health.EvaluatedAt = ts(at)
		ev := c.event(hub.OverviewChanges{Rows: make([]hub.AgentOverview, 1), Beat: 45})
		if (ev != nil) != s.sends {
			t.Fatalf("%s: event %q, want one: %v", s.what, ev, s.sends)
		}
		if ev == nil {
			continue
		}
		merge(t, page, ev[len("event: agents\ndata: "):])
		whole, err := rowJSON.Marshal(cur)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		json.Unmarshal(whole, &want)
		if got := page["alice"]; !reflect.DeepEqual(shown(got), shown(want)) {
			t.Errorf("%s: the page holds\n%v\nwant\n%v\n(event %s)", s.what, got, want, ev)
		}
	}
}

// fill sets every field of m, nested messages and lists included, to a
// value that is not empty.
func fill(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			e := l.NewElement()
			if fd.Message() != nil {
				fill(e.Message())
			} else {
				e = some(fd)
			}
			l.Append(e)
		case fd.Message() != nil:
			fill(m.Mutable(fd).Message())
		default:
			m.Set(fd, some(fd))
		}
	}
}

// some is a value of the scalar field fd that is not empty.
func some(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x")
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(7 * 60)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(7 * 60)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	}
	panic("no value for " + string(fd.FullName()))
}

// Every field of a row is compared: set, it goes in the change; emptied,
// the change names it in cleared. But for the three that are not compared:
// the agent's name (the row's key), since_last and the health's
// evaluated_at. A field added to the messages fails here until rowDiff
// compares it.
func TestRowDiffSeesEveryField(t *testing.T) {
	t.Parallel()
	unshown := map[string]bool{"agent.name": true, "agent.since_last": true, "health.evaluated_at": true}
	base := func() *hubv1.AgentOverview {
		return &hubv1.AgentOverview{Agent: &hubv1.Agent{Name: "alice"}, Health: &hubv1.AgentHealth{}}
	}
	for _, group := range []struct {
		prefix string
		of     func(r *hubv1.AgentOverview) protoreflect.Message
	}{
		{"", func(r *hubv1.AgentOverview) protoreflect.Message { return r.ProtoReflect() }},
		{"agent.", func(r *hubv1.AgentOverview) protoreflect.Message { return r.Agent.ProtoReflect() }},
		{"health.", func(r *hubv1.AgentOverview) protoreflect.Message { return r.Health.ProtoReflect() }},
	} {
		fields := group.of(base()).Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			name := group.prefix + string(fd.Name())
			if name == "agent" || name == "health" || name == "agent.name" {
				continue
			}
			set := base()
			one := set.ProtoReflect().New().Interface().(*hubv1.AgentOverview)
			one.Agent, one.Health = &hubv1.Agent{}, &hubv1.AgentHealth{}
			fill(group.of(one))
			group.of(set).Set(fd, group.of(one).Get(fd))

			held := base()
			var p rowPart
			part := p.reset(set)
			cleared, differs := rowDiff(held, set, part)
			if unshown[name] {
				if differs {
					t.Errorf("%s set: the row differs, want the field left out", name)
				}
				continue
			}
			if !differs || len(cleared) != 0 || !group.of(part).Has(fd) || !group.of(part).Get(fd).Equal(group.of(set).Get(fd)) {
				t.Errorf("%s set: differs %v, cleared %v, change %v; want the field in the change", name, differs, cleared, part)
			}
			if !proto.Equal(held, set) {
				t.Errorf("%s set: the held row is %v after the change, want %v", name, held, set)
			}
			cleared, differs = rowDiff(held, base(), p.reset(base()))
			if !differs || !slices.Equal(cleared, []string{name}) {
				t.Errorf("%s emptied: differs %v, cleared %v; want it cleared", name, differs, cleared)
			}
		}
	}
}
