package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
)

// A stale orchestrator (a leader that lost its lock, ticking once more on
// the state it read before its successor acted) decides again a nudge
// already sent; the store refuses its claim, because the agent's check is
// no longer the one it decided from, so the agent gets the nudge once.
// The stale orchestrator is a second service and orchestrator on the same
// store whose transactions read, as due nudge checks, the rows read
// before the first send.
func TestTickStaleStateSendsNoSecondNudge(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, token := r.agent("claude")
	r.tick()
	r.clock.Advance(10 * time.Minute)
	var before []hub.DueNudge
	r.view(func(tx hub.Tx) (err error) { before, err = tx.DueNudges(r.clock.Now(), 10, nil); return err })
	if len(before) != 1 {
		t.Fatalf("%d due nudge checks before the nudge, want claude's", len(before))
	}
	if rep := r.tick(); rep.Nudged != 1 {
		t.Fatalf("no nudge at the inactivity timeout (report %+v)", rep)
	}
	svc := hub.NewServices(hub.NewCore(staleNudges{r.db, before}, r.clock, hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, r.clock)))
	stale, err := orchestrator.New(r.clock, orchestrator.JobsOf(svc), r.set)
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Tick(r.ctx, r.clock.Now()); err != nil {
		t.Fatalf("stale tick: %v", err)
	}
	if rep := stale.Stats().Last; rep.Checked != 1 || rep.Nudged != 0 {
		t.Errorf("the stale orchestrator checked %d, nudged %d; want 1 checked, none nudged (report %+v)", rep.Checked, rep.Nudged, rep)
	}
	if ns := r.inbox(token, hub.KindNudge); len(ns) != 1 {
		t.Errorf("claude got %d nudges, want 1", len(ns))
	}
}

// staleNudges is a store whose transactions read the due nudge checks
// rows, whatever the store holds now.
type staleNudges struct {
	hub.Store
	rows []hub.DueNudge
}

func (s staleNudges) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(staleTx{tx, s.rows}) })
}

func (s staleNudges) View(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.View(ctx, func(tx hub.Tx) error { return fn(staleTx{tx, s.rows}) })
}

type staleTx struct {
	hub.Tx
	rows []hub.DueNudge
}

func (t staleTx) DueNudges(time.Time, int, map[int64]hub.AgentLiveness) ([]hub.DueNudge, error) {
	return t.rows, nil
}

func (t staleTx) DueAgentChecks(time.Time, int) ([]int64, error) {
	ids := make([]int64, len(t.rows))
	for i, r := range t.rows {
		ids[i] = r.Agent.ID
	}
	return ids, nil
}

func TestTickStaleStateSendsNoSecondPulse(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a, token := r.agent("claude")
	cfg := hub.PulseConfig{Enabled: true, Interval: 30 * time.Minute, Instructions: "Check reminders."}
	if _, err := r.svc.Schedule.SetPulseConfig(r.ctx, "claude", cfg); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Second)
	var before *hub.Pulse
	r.view(func(tx hub.Tx) (err error) { before, err = tx.Pulse(a.ID); return err })
	if rep := r.tick(); rep.Pulses != 1 {
		t.Fatalf("no pulse (report %+v)", rep)
	}
	r.update(func(tx hub.Tx) error { return tx.PutPulseState(before.State, r.clock.Now()) })
	if rep := r.tick(); rep.Pulses != 0 {
		t.Errorf("the stale state pulsed again (report %+v)", rep)
	}
	if ps := r.inbox(token, hub.KindHeartbeat); len(ps) != 1 {
		t.Errorf("claude got %d pulses, want 1", len(ps))
	}
}

func (r *rig) view(fn func(hub.Tx) error) {
	r.tb.Helper()
	if err := r.db.View(r.ctx, fn); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *rig) update(fn func(hub.Tx) error) {
	r.tb.Helper()
	if err := r.db.Update(r.ctx, fn); err != nil {
		r.tb.Fatal(err)
	}
}
