package orchestrator_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// t0 is the fake clock's start in the tick tests (a Thursday, 10:00 UTC).
var t0 = time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)

// rig is a hub over a SQLite file in a temporary directory with a fake
// clock and an orchestrator whose Tick the test calls.
type rig struct {
	tb    testing.TB
	ctx   context.Context
	path  string
	set   hub.ScheduleSettings
	clock *hub.FakeClock
	db    *sqlite.DB
	svc   *hub.Services
	o     *orchestrator.Orchestrator

	agents map[string]*hub.Agent // by token
}

func newRig(tb testing.TB, mod ...func(*hub.ScheduleSettings)) *rig {
	tb.Helper()
	set := hub.DefaultScheduleSettings()
	for _, m := range mod {
		m(&set)
	}
	r := &rig{tb: tb, ctx: context.Background(), path: filepath.Join(tb.TempDir(), "hub.db"), set: set, clock: hub.NewFakeClock(t0), agents: map[string]*hub.Agent{}}
	r.open()
	tb.Cleanup(func() { r.db.Close() })
	return r
}

// open opens the store and starts a service and orchestrator on it.
func (r *rig) open() {
	r.tb.Helper()
	db, err := sqlite.Open(r.ctx, r.path, sqlite.Options{})
	if err != nil {
		r.tb.Fatalf("open store: %v", err)
	}
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	r.db = db
	r.svc = hub.NewServices(hub.NewCore(db, r.clock, cfg, hub.NewWaiters(cfg.WaitLimits, r.clock)))
	if err := r.svc.Init(r.ctx); err != nil {
		r.tb.Fatalf("Init: %v", err)
	}
	if r.o, err = orchestrator.New(r.clock, orchestrator.JobsOf(r.svc), r.set); err != nil {
		r.tb.Fatalf("New: %v", err)
	}
	if err := r.o.Init(r.ctx); err != nil {
		r.tb.Fatalf("orchestrator Init: %v", err)
	}
}

// restart closes the store and opens everything again, as a hub restart
// does (in-memory state is lost; the clock keeps its time).
func (r *rig) restart() {
	r.tb.Helper()
	if err := r.db.Close(); err != nil {
		r.tb.Fatalf("close: %v", err)
	}
	r.open()
}

// tick runs one tick at the clock's time and returns its report.
func (r *rig) tick() orchestrator.Report {
	r.tb.Helper()
	if err := r.o.Tick(r.ctx, r.clock.Now()); err != nil {
		r.tb.Fatalf("Tick at %v: %v", r.clock.Now().Sub(t0), err)
	}
	return r.o.Stats().Last
}

// run advances the clock by step and ticks until d has passed; it returns
// the sum of the reports.
func (r *rig) run(d, step time.Duration) orchestrator.Report {
	r.tb.Helper()
	var sum orchestrator.Report
	for end := r.clock.Now().Add(d); r.clock.Now().Before(end); {
		r.clock.Advance(step)
		rep := r.tick()
		sum.Nudged += rep.Nudged
		sum.Pulses += rep.Pulses
		sum.CronRuns += rep.CronRuns
		sum.Events += rep.Events
		sum.Beat = rep.Beat
	}
	return sum
}

// agent creates an agent and returns it with its token.
func (r *rig) agent(name string) (*hub.Agent, string) {
	r.tb.Helper()
	a, token, err := r.svc.Agents.CreateAgent(r.ctx, hub.CreateAgentRequest{Name: name})
	if err != nil {
		r.tb.Fatalf("CreateAgent %s: %v", name, err)
	}
	r.agents[token] = a
	return a, token
}

// call authenticates token as an agent call does and returns the caller.
func (r *rig) call(token string) *hub.Agent {
	r.tb.Helper()
	a, err := r.svc.Agents.Authenticate(r.ctx, token)
	if err != nil {
		r.tb.Fatalf("Authenticate: %v", err)
	}
	return a
}

// checkpoint makes the agent of token write a checkpoint (conscious activity).
func (r *rig) checkpoint(token string) {
	r.tb.Helper()
	if _, err := r.svc.Liveness.Checkpoint(r.ctx, r.call(token), "working", 0); err != nil {
		r.tb.Fatalf("Checkpoint: %v", err)
	}
}

// inbox returns the messages of kind (all kinds when empty) in the inbox
// of the agent of token. It is not a call of that agent (no presence).
func (r *rig) inbox(token, kind string) []*hub.Message {
	r.tb.Helper()
	ms, _, _, err := r.svc.Messages.List(r.ctx, r.agents[token], hub.ListRequest{Limit: 500})
	if err != nil {
		r.tb.Fatalf("List: %v", err)
	}
	var out []*hub.Message
	for _, m := range ms {
		if kind == "" || m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// events returns the kinds of the stored events of agent (all when empty)
// of kind (all when empty).
func (r *rig) events(agent, kind string) []*hub.Event {
	r.tb.Helper()
	evs, err := r.svc.Liveness.ListEvents(r.ctx, hub.ListEventsRequest{Agent: agent, Kind: kind, Limit: 1000})
	if err != nil {
		r.tb.Fatalf("ListEvents: %v", err)
	}
	return evs
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
