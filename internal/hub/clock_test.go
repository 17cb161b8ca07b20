package hub_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestFakeClockFiresWhatFallsDue: timers, tickers and AfterFunc fire when
// Advance or Set passes their time, not before; a stopped timer never
// fires; a reset one fires at its new time.
func TestFakeClockFiresWhatFallsDue(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := hub.NewFakeClock(t0)
	fired := func(ch <-chan time.Time) (time.Time, bool) {
		select {
		case at := <-ch:
			return at, true
		default:
			return time.Time{}, false
		}
	}
	timer := c.NewTimer(10 * time.Second)
	stopped := c.NewTimer(5 * time.Second)
	ticker := c.NewTicker(4 * time.Second)
	ran := make(chan struct{})
	c.AfterFunc(7*time.Second, func() { close(ran) })
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop of a pending timer = false, or of a stopped one = true")
	}
	c.Advance(3 * time.Second)
	if _, ok := fired(timer.C()); ok {
		t.Fatal("the timer fired 3 s into 10")
	}
	if _, ok := fired(ticker.C()); ok {
		t.Fatal("the ticker fired 3 s into 4")
	}
	c.Advance(5 * time.Second) // 8 s
	if at, ok := fired(ticker.C()); !ok || !at.Equal(t0.Add(8*time.Second)) {
		t.Fatalf("ticker at 8 s: %v %v, want a tick at the clock's time", at, ok)
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc did not run once its time passed")
	}
	if _, ok := fired(stopped.C()); ok {
		t.Fatal("a stopped timer fired")
	}
	if timer.Reset(5*time.Second) != true { // pending: due at 13 s now
		t.Fatal("Reset of a pending timer = false")
	}
	c.Set(t0.Add(12 * time.Second))
	if _, ok := fired(timer.C()); ok {
		t.Fatal("the reset timer fired before its new time")
	}
	c.Advance(time.Second)
	if _, ok := fired(timer.C()); !ok {
		t.Fatal("the reset timer did not fire at its new time")
	}
	ticker.Stop()
	c.Advance(time.Minute)
	if _, ok := fired(ticker.C()); ok {
		t.Fatal("a stopped ticker ticked")
	}
}
