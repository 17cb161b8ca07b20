package hub

import (
	"testing"
	"time"
)

// expiredSoon waits (bounded) for w's timeout to wake it.
func expiredSoon(t *testing.T, w *Waiter) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatal("the wait was not woken by its timeout")
	}
	if !w.expired.Load() {
		t.Fatal("woken, but not marked expired")
	}
}

// notExpired fails the test if any of ws has expired.
func notExpired(t *testing.T, when string, ws ...*Waiter) {
	t.Helper()
	for i, w := range ws {
		if w.expired.Load() {
			t.Errorf("%s: wait %d expired, want it still parked", when, i)
		}
	}
}

// The waits' timeouts share one heap and one timer: each wait expires at its
// own deadline whatever the order they were given in, a closed wait leaves
// the heap and never expires, and the timer is stopped when no wait has a
// deadline. The hub's clock is a fake one the test moves.
func TestWaitersTimeoutsShareOneTimer(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ws := NewWaiters(WaitLimits{PerAgent: 8, Total: 8}, clock)
	register := func(agent int64) *Waiter {
		t.Helper()
		w, err := ws.Register(agent, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	late, closed, early, never := register(1), register(2), register(3), register(4)
	late.expireAfter(time.Hour)
	closed.expireAfter(time.Millisecond)
	early.expireAfter(20 * time.Millisecond)
	early.expireAfter(time.Hour) // the first deadline counts
	closed.Close()               // the earliest deadline: the timer fires, finds nothing, re-arms

	clock.Advance(19 * time.Millisecond)
	notExpired(t, "19 ms on", late, closed, early, never)
	clock.Advance(time.Millisecond)
	expiredSoon(t, early)
	notExpired(t, "20 ms on", late, closed, never)
	ws.mu.Lock()
	n := len(ws.expiries)
	ws.mu.Unlock()
	if n != 1 {
		t.Errorf("%d deadlines in the heap, want 1 (late's)", n)
	}

	// Deadlines given out of order expire in order, each once.
	var ordered []*Waiter
	for i, d := range []time.Duration{30, 10, 20} {
		w := register(int64(10 + i))
		w.expireAfter(d * time.Millisecond)
		ordered = append(ordered, w)
	}
	clock.Advance(10 * time.Millisecond)
	expiredSoon(t, ordered[1])
	notExpired(t, "10 ms after the three", ordered[0], ordered[2])
	clock.Advance(10 * time.Millisecond)
	expiredSoon(t, ordered[2])
	notExpired(t, "20 ms after the three", ordered[0])
	clock.Advance(10 * time.Millisecond)
	expiredSoon(t, ordered[0])
	notExpired(t, "after the three", late, never)
	for _, w := range []*Waiter{early, ordered[0], ordered[1], ordered[2]} {
		w.Close()
	}
	late.Close()
	never.Close()
	ws.mu.Lock()
	if len(ws.expiries) != 0 || ws.totals[parkWait] != 0 {
		t.Errorf("after closing every wait: %d deadlines, %d waits; want none", len(ws.expiries), ws.totals[parkWait])
	}
	ws.mu.Unlock()
	// The timer still set for late's deadline fires, finds nothing and stops.
	clock.Advance(time.Hour)
	for deadline := time.Now().Add(10 * time.Second); clock.Timers() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers pending on the clock an hour after the last wait closed, want the one timer stopped", clock.Timers())
		}
	}
}

// A closed wait is taken out of the middle of the heap without disturbing
// the others' order.
func TestWaitersCloseKeepsTheHeapOrdered(t *testing.T) {
	t.Parallel()
	ws := NewWaiters(WaitLimits{PerAgent: 64, Total: 64}, SystemClock{})
	var all []*Waiter
	for i := 0; i < 40; i++ {
		w, err := ws.Register(int64(i%5), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.expireAfter(time.Duration(1+(i*7)%40) * time.Hour)
		all = append(all, w)
	}
	for i := 0; i < len(all); i += 3 {
		all[i].Close()
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if got, want := len(ws.expiries), 40-14; got != want {
		t.Fatalf("%d deadlines left, want %d", got, want)
	}
	for i, w := range ws.expiries {
		if int(w.expiryIdx) != i {
			t.Errorf("wait at %d believes it is at %d", i, w.expiryIdx)
		}
		if l := 2*i + 1; l < len(ws.expiries) && ws.expiries[l].deadline < w.deadline {
			t.Errorf("heap order broken at %d", i)
		}
		if r := 2*i + 2; r < len(ws.expiries) && ws.expiries[r].deadline < w.deadline {
			t.Errorf("heap order broken at %d", i)
		}
	}
}
