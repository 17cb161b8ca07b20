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

// The waits' timeouts share one heap and one timer: each wait expires at its
// own deadline whatever the order they were given in, a closed wait leaves
// the heap and never expires, and the timer is stopped when no wait has a
// deadline. Only the order is checked, never how long anything took.
func TestWaitersTimeoutsShareOneTimer(t *testing.T) {
	t.Parallel()
	ws := NewWaiters(WaitLimits{PerAgent: 8, Total: 8}, SystemClock{})
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

	expiredSoon(t, early)
	if late.expired.Load() || closed.expired.Load() || never.expired.Load() {
		t.Errorf("expired: late %v, closed %v, never %v; want none of them",
			late.expired.Load(), closed.expired.Load(), never.expired.Load())
	}
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
	for _, i := range []int{1, 2, 0} {
		expiredSoon(t, ordered[i])
	}
	for _, w := range []*Waiter{early, ordered[0], ordered[1], ordered[2]} {
		w.Close()
	}
	late.Close()
	never.Close()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(ws.expiries) != 0 || ws.totals[parkWait] != 0 {
		t.Errorf("after closing every wait: %d deadlines, %d waits; want none", len(ws.expiries), ws.totals[parkWait])
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
