package hub

import (
	"sync"
	"testing"
	"time"
)

// A function runs on a goroutine that waits for work when there is one,
// past warmMax on a goroutine of its own, and a warm goroutine with
// nothing to run ends.
func TestWarmSetRunsOnWaitingGoroutinesBoundedAndEndsIdleOnes(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	w := newWarmSet(clock)

	// warmMax functions that block, then one more: all run.
	release := make(chan struct{})
	var running sync.WaitGroup
	running.Add(warmMax + 1)
	var ran sync.WaitGroup
	ran.Add(warmMax + 1)
	for range warmMax + 1 {
		w.Go(func() {
			defer ran.Done()
			running.Done()
			<-release
		})
	}
	running.Wait()
	if got := w.n.Load(); got != warmMax {
		t.Fatalf("%d warm goroutines with %d functions running, want %d (the bound)", got, warmMax+1, warmMax)
	}
	close(release)
	ran.Wait()

	// Once they wait, functions run on them: no goroutine is added.
	waiting(t, w, warmMax)
	for range 3 * warmMax {
		done := make(chan struct{})
		w.Go(func() { close(done) })
		<-done
		waiting(t, w, warmMax)
	}
	if got := w.n.Load(); got != warmMax {
		t.Fatalf("%d warm goroutines after %d functions run one at a time, want the %d that waited", got, 3*warmMax, warmMax)
	}

	// Idle ones end.
	deadline := time.Now().Add(30 * time.Second)
	for w.n.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d warm goroutines still there, idle", w.n.Load())
		}
		clock.Advance(warmIdle) // again: one may have been between its function and its wait
		time.Sleep(time.Millisecond)
	}
}

// waiting waits until n goroutines of w wait for work: a function handed
// to w is then taken by one of them.
func waiting(t *testing.T, w *warmSet, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		took := 0
		for range n {
			select {
			case w.work <- func() {}:
				took++
			default:
			}
		}
		if took == n && w.n.Load() == int32(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d warm goroutines, %d of %d took work", w.n.Load(), took, n)
		}
		time.Sleep(time.Millisecond)
	}
}
