package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestTickRunsEveryStepAndJoinsErrors(t *testing.T) {
	t.Parallel()
	o := &Orchestrator{Interval: time.Second}
	var ran []string
	o.steps = []step{
		{"beat", func(context.Context, time.Time) error { ran = append(ran, "beat"); return nil }},
		{"health", func(context.Context, time.Time) error { ran = append(ran, "health"); return errors.New("db locked") }},
		{"cron", func(context.Context, time.Time) error { ran = append(ran, "cron"); return nil }},
	}
	err := o.Tick(context.Background(), time.Now())
	if got, want := strings.Join(ran, ","), "beat,health,cron"; got != want {
		t.Errorf("ran %s, want %s", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "health: db locked") {
		t.Errorf("err = %v, want it to name the failing step", err)
	}
}

// TestRunNeverOverlaps: a tick slower than the interval delays the next one
// instead of running beside it, and the overrun is counted; the ticks and
// their durations are the clock's.
func TestRunNeverOverlaps(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	o := &Orchestrator{Interval: 2 * time.Millisecond, Clock: clock, Logger: slog.New(slog.DiscardHandler)}
	var inFlight, maxInFlight, calls atomic.Int32
	ran := make(chan struct{}, 1)
	o.steps = []step{{"slow", func(context.Context, time.Time) error {
		n := inFlight.Add(1)
		if n > maxInFlight.Load() {
			maxInFlight.Store(n)
		}
		calls.Add(1)
		clock.Advance(10 * time.Millisecond) // the tick takes 10ms: the ticker fires meanwhile
		inFlight.Add(-1)
		select {
		case ran <- struct{}{}:
		default:
		}
		return nil
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	for clock.Timers() == 0 { // Run's ticker is set
		time.Sleep(time.Millisecond)
	}
	clock.Advance(2 * time.Millisecond)
	for calls.Load() < 3 {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d ticks ran; want 3", calls.Load())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if maxInFlight.Load() != 1 {
		t.Errorf("max ticks in flight = %d, want 1", maxInFlight.Load())
	}
	s := o.Stats()
	if s.Ticks < 3 || s.Overruns < 3 || s.MaxDuration != 10*time.Millisecond || !s.Leader {
		t.Errorf("stats = %+v, want ≥3 ticks, ≥3 overruns, max 10ms, leader", s)
	}
}

type fakeLeader struct {
	mu       sync.Mutex
	lead     bool
	err      error
	lost     chan struct{} // nil: the leadership never ends
	resigned bool
}

func (l *fakeLeader) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *fakeLeader) Lead(context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lead, l.err
}

func (l *fakeLeader) Resign(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resigned = true
	return nil
}

func TestRunOnlyTicksAsLeaderAndRecordsErrors(t *testing.T) {
	t.Parallel()
	l := &fakeLeader{}
	o := &Orchestrator{Interval: time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	o.Leader = l
	var calls atomic.Int32
	o.steps = []step{{"cron", func(context.Context, time.Time) error { calls.Add(1); return errors.New("boom") }}}

	o.runTick(context.Background())
	if calls.Load() != 0 || o.Stats().NotLeader != 1 || o.Stats().Leader {
		t.Fatalf("follower ticked: calls=%d stats=%+v", calls.Load(), o.Stats())
	}
	l.err = errors.New("lock connection lost")
	o.runTick(context.Background())
	if s := o.Stats(); calls.Load() != 0 || s.Errors != 1 || !strings.Contains(s.LastError, "lock connection lost") {
		t.Fatalf("leader error: calls=%d stats=%+v", calls.Load(), s)
	}
	l.err, l.lead = nil, true
	o.runTick(context.Background())
	if s := o.Stats(); calls.Load() != 1 || s.Ticks != 1 || s.Errors != 2 || s.LastError != "cron: boom" {
		t.Fatalf("leader tick: calls=%d stats=%+v", calls.Load(), s)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !l.resigned {
		t.Errorf("Run did not resign leadership on exit")
	}
}

// A tick during which the leadership ends stops there (its context is
// cancelled) and counts as failed, even one whose steps finished: another
// replica may have led before it ended. A tick cut short by the hub
// stopping is no failure.
func TestTickThatOutlivesItsLeadershipFails(t *testing.T) {
	t.Parallel()
	l := &fakeLeader{lead: true, lost: make(chan struct{})}
	o := &Orchestrator{Interval: time.Second, Leader: l, Logger: slog.New(slog.DiscardHandler)}
	var stepErr error
	o.steps = []step{{"cron", func(ctx context.Context, _ time.Time) error {
		close(l.lost)
		<-ctx.Done() // the lock lost: the step's calls end
		stepErr = context.Cause(ctx)
		return ctx.Err()
	}}}
	o.runTick(context.Background())
	s := o.Stats()
	if !errors.Is(stepErr, errLostLead) || s.Errors != 1 || !strings.Contains(s.LastError, "lost the orchestrator's leader lock") {
		t.Fatalf("the step saw %v; stats %+v: want the tick cancelled and failed", stepErr, s)
	}

	l.lost = make(chan struct{})
	o.steps = []step{{"cron", func(context.Context, time.Time) error { close(l.lost); return nil }}}
	o.runTick(context.Background())
	if s := o.Stats(); s.Errors != 2 {
		t.Fatalf("a tick whose steps finished after the lock was lost: stats %+v, want it failed", s)
	}

	l.lost = make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	o.steps = []step{{"cron", func(ctx context.Context, _ time.Time) error { stop(); return ctx.Err() }}}
	o.runTick(ctx)
	if s := o.Stats(); s.Errors != 2 || s.Ticks != 3 {
		t.Fatalf("a tick cut short by the hub stopping: stats %+v, want no new error", s)
	}
}

func TestAlwaysLeader(t *testing.T) {
	t.Parallel()
	var l Leader = AlwaysLeader{}
	if ok, err := l.Lead(context.Background()); !ok || err != nil {
		t.Errorf("Lead = %v, %v", ok, err)
	}
}

// TestTimedIsToldOfEachLeadingTick: the hub's metrics learn each tick's
// duration and its steps', on the clock, and nothing of a tick another
// replica runs.
func TestTimedIsToldOfEachLeadingTick(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	l := &fakeLeader{}
	o := &Orchestrator{Interval: time.Second, Clock: clock, Leader: l, Logger: slog.New(slog.DiscardHandler)}
	o.steps = []step{
		{"beat", func(context.Context, time.Time) error { clock.Advance(30 * time.Millisecond); return nil }},
		{"mentions", func(context.Context, time.Time) error { clock.Advance(20 * time.Millisecond); return nil }},
	}
	var ticks []time.Duration
	var steps map[string]time.Duration
	o.Timed = func(d time.Duration, s map[string]time.Duration) { ticks, steps = append(ticks, d), s }
	o.runTick(context.Background())
	if len(ticks) != 0 {
		t.Fatalf("told of a tick this process did not run: %v", ticks)
	}
	l.lead = true
	o.runTick(context.Background())
	if len(ticks) != 1 || ticks[0] != 50*time.Millisecond || steps["beat"] != 30*time.Millisecond || steps["mentions"] != 20*time.Millisecond || len(steps) != 2 {
		t.Errorf("told of ticks %v, steps %v; want one of 50ms: beat 30ms, mentions 20ms", ticks, steps)
	}
}
