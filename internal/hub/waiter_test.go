package hub_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// pending reports whether a wake-up is waiting on w, consuming it.
func pending(w *hub.Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

// A wake-up that arrives between registration and the wait's select is
// kept (the channel is buffered), so registering before checking the store
// loses nothing; several wake-ups fold into one.
func TestWaitersNotify(t *testing.T) {
	t.Parallel()
	ws := hub.NewWaiters(hub.WaitLimits{PerAgent: 4, Total: 10}, hub.SystemClock{})
	ws.Notify(1) // before registration: nobody to wake, nothing kept
	w, err := ws.Register(1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ws.Register(2, 0, nil)
	if pending(w) {
		t.Error("a notify before Register left a wake-up")
	}
	ws.Notify(1)
	ws.Notify(1, 1)
	if !pending(w) {
		t.Error("no wake-up after Notify")
	}
	if pending(w) {
		t.Error("two wake-ups after three notifies, want them folded into one")
	}
	if pending(other) {
		t.Error("agent 2 woken by a notify for agent 1")
	}
	ws.Notify(3, 2)
	if !pending(other) {
		t.Error("agent 2 not woken by Notify(3, 2)")
	}

	// Every wait of an agent wakes.
	w2, _ := ws.Register(1, 0, nil)
	ws.Notify(1)
	if !pending(w) || !pending(w2) {
		t.Error("Notify did not wake both waits of the agent")
	}
	w.Close()
	ws.Notify(1)
	if pending(w) {
		t.Error("a closed waiter was woken")
	}
}

func TestWaitersLimits(t *testing.T) {
	t.Parallel()
	ws := hub.NewWaiters(hub.WaitLimits{PerAgent: 2, Total: 3}, hub.SystemClock{})
	register := func(agent int64, want string) *hub.Waiter {
		t.Helper()
		w, err := ws.Register(agent, 0, nil)
		if got := hub.ErrorCode(err); got != want {
			t.Fatalf("Register(%d): code %q (%v), want %q", agent, got, err, want)
		}
		return w
	}
	a1 := register(1, "")
	register(1, "")
	register(1, hub.EEXHAUSTED) // per agent
	register(2, "")
	register(3, hub.EEXHAUSTED) // in total
	if got, want := ws.Count(), 3; got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
	if got, want := ws.AgentCount(1), 2; got != want {
		t.Errorf("AgentCount(1) = %d, want %d", got, want)
	}
	agents := ws.Agents()
	slices.Sort(agents)
	if !slices.Equal(agents, []int64{1, 2}) {
		t.Errorf("Agents() = %v, want [1 2]", agents)
	}
	a1.Close()
	a1.Close() // idempotent: frees one slot, not two
	if got, want := ws.Count(), 2; got != want {
		t.Errorf("Count() after closing one twice = %d, want %d", got, want)
	}
	register(1, "")
	register(3, hub.EEXHAUSTED)
}

func TestWaitersConcurrent(t *testing.T) {
	t.Parallel()
	ws := hub.NewWaiters(hub.WaitLimits{PerAgent: 1000, Total: 100000}, hub.SystemClock{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				agent := int64((g + i) % 5)
				w, err := ws.Register(agent, 0, nil)
				if err != nil {
					t.Error(err)
					return
				}
				ws.Notify(agent, agent+1)
				pending(w)
				_ = ws.Agents()
				w.Close()
			}
		})
	}
	wg.Wait()
	if got := ws.Count(); got != 0 {
		t.Errorf("Count() = %d after every waiter closed, want 0", got)
	}
	if got := ws.Agents(); len(got) != 0 {
		t.Errorf("Agents() = %v after every waiter closed, want none", got)
	}
}

// An agent's waits are a list: closing the first, a middle or the last one
// leaves the others registered, counted and woken; a revocation wakes them
// all with the reason, and a wait registered after it with the new token
// is not revoked.
func TestWaitersCloseAnyOfAnAgentsWaits(t *testing.T) {
	t.Parallel()
	for _, closing := range [][]int{{0}, {2}, {4}, {0, 4}, {1, 3}, {4, 3, 2, 1}} {
		ws := hub.NewWaiters(hub.WaitLimits{PerAgent: 5, Total: 10}, hub.SystemClock{})
		var w []*hub.Waiter
		for range 5 {
			x, err := ws.Register(7, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			w = append(w, x)
		}
		for _, i := range closing {
			w[i].Close()
		}
		ws.Notify(7)
		for i, x := range w {
			want := !slices.Contains(closing, i)
			if got := pending(x); got != want {
				t.Errorf("closing %v: wait %d woken = %v, want %v", closing, i, got, want)
			}
		}
		if got, want := ws.AgentCount(7), 5-len(closing); got != want {
			t.Errorf("closing %v: AgentCount = %d, want %d", closing, got, want)
		}
		reason := hub.Errorf(hub.EUNAUTHORIZED, "rotated")
		ws.Revoke(hub.AgentPrincipal(7), reason)
		for i, x := range w {
			open := !slices.Contains(closing, i)
			if got := pending(x); got != open {
				t.Errorf("closing %v: wait %d woken by the revocation = %v, want %v", closing, i, got, open)
			}
			if got := x.Err(); open && got != reason || !open && got != nil {
				t.Errorf("closing %v: wait %d Err() = %v after the revocation", closing, i, got)
			}
		}
		for _, x := range w {
			x.Close()
		}
		if got := ws.Count(); got != 0 {
			t.Errorf("closing %v: Count() = %d after closing all, want 0", closing, got)
		}
		fresh, err := ws.Register(7, ws.Epoch(), nil)
		if err != nil || fresh.Err() != nil {
			t.Errorf("closing %v: a wait with the new token: %v, Err %v; want registered and not revoked", closing, err, fresh.Err())
		}
	}
}
