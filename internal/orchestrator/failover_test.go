package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A stale orchestrator (a leader that lost its lock, ticking once more on
// the state it read before its successor acted) decides again a nudge or a
// pulse already sent; the store's record of what was sent refuses it, so
// the agent gets it once. The stale state is made by writing back the
// check or pulse state read before the first send.
func TestTickStaleStateSendsNoSecondNudge(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a, token := r.agent("claude")
	r.tick()
	r.clock.Advance(10 * time.Minute)
	var before hub.AgentCheck
	r.view(func(tx hub.Tx) (err error) { before, err = tx.AgentCheck(a.ID); return err })
	if rep := r.tick(); rep.Nudged != 1 {
		t.Fatalf("no nudge at the inactivity timeout (report %+v)", rep)
	}
	r.update(func(tx hub.Tx) error { return tx.PutAgentCheck(before) })
	if rep := r.tick(); rep.Nudged != 0 {
		t.Errorf("the stale state nudged again (report %+v)", rep)
	}
	if ns := r.inbox(token, hub.KindNudge); len(ns) != 1 {
		t.Errorf("claude got %d nudges, want 1", len(ns))
	}
}

func TestTickStaleStateSendsNoSecondPulse(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a, token := r.agent("claude")
	cfg := hub.PulseConfig{Enabled: true, Interval: 30 * time.Minute, Instructions: "Check reminders."}
	if _, err := r.svc.SetPulseConfig(r.ctx, "claude", cfg); err != nil {
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
