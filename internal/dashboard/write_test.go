package dashboard

import (
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// stuckWriter is a stream to a page that reads nothing: a write blocks
// until the connection's deadline is put in the past.
type stuckWriter struct {
	http.ResponseWriter
	once     sync.Once
	deadline chan struct{}
	cleared  int // deadlines cleared (the zero time)
}

func (w *stuckWriter) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		w.cleared++
		return nil
	}
	if t.Before(time.Now()) {
		w.once.Do(func() { close(w.deadline) })
	}
	return nil
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.deadline
	return 0, os.ErrDeadlineExceeded
}

func (w *stuckWriter) Flush() {}

// A stream's write that does not finish within its limit on the hub's
// clock fails; a write that finishes leaves no timer behind.
func TestStreamWriteEndsAtItsLimitOnTheClock(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Unix(1_700_000_000, 0))
	w := &stuckWriter{deadline: make(chan struct{})}
	done := make(chan bool)
	go func() { done <- writeWithin(w, clock, time.Minute, []byte("event: change\n\n")) }()
	for clock.Timers() == 0 {
		runtime.Gosched()
	}
	clock.Advance(time.Minute - time.Second)
	select {
	case <-done:
		t.Fatal("the write ended before its limit passed on the clock")
	case <-time.After(50 * time.Millisecond):
	}
	clock.Advance(time.Second)
	select {
	case ok := <-done:
		if ok {
			t.Error("a write that never finished reported success")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write was still blocked 10 s after its limit passed on the clock")
	}
	if w.cleared != 1 {
		t.Errorf("the server's write deadline was cleared %d times, want once before the write", w.cleared)
	}

	free := &stuckWriter{deadline: make(chan struct{})}
	close(free.deadline) // its write returns at once
	writeWithin(free, clock, time.Minute, []byte("x"))
	if n := clock.Timers(); n != 0 {
		t.Errorf("%d timers pending after the write ended, want 0", n)
	}
}
