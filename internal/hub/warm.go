package hub

import (
	"sync/atomic"
	"time"
)

// A warmSet runs short functions (a stream's pump, a call a stream
// carries, a wait's store read) on a few goroutines it keeps between
// them. A goroutine the runtime starts gets a small stack, which a store
// read (database/sql and the SQLite driver) grows to 16–32 KiB, copying
// it at each doubling: with a goroutine started per wake-up and per
// carried call, that was 3.5 % of the hub's CPU in a fleet of 2,000
// agents (morestack → copystack). A warm goroutine keeps the stack its
// last function grew (the collector may shrink it while it waits). At
// most warmMax goroutines are warm, busy or waiting (a carried call that
// writes waits for its group commit on one: 16 were all busy in a fleet
// of 1,000, 155 times a second); past that a function runs on a goroutine
// of its own. One that waited warmIdle with nothing
// to run ends: a hub at rest holds none, and none belongs to a parked
// stream or wait.
type warmSet struct {
	clock Clock
	work  chan func()  // unbuffered: a send succeeds when a warm goroutine waits
	n     atomic.Int32 // warm goroutines, busy or waiting
}

const (
	warmMax  = 64
	warmIdle = 500 * time.Millisecond
)

func newWarmSet(clock Clock) *warmSet {
	return &warmSet{clock: clock, work: make(chan func())}
}

// Go runs f on a warm goroutine that waits for work, or on a new one.
func (w *warmSet) Go(f func()) {
	select {
	case w.work <- f:
		return
	default:
	}
	if w.n.Add(1) > warmMax {
		w.n.Add(-1)
		go f()
		return
	}
	go w.run(f)
}

// run runs f, then what Go hands it, until it waited warmIdle for nothing.
func (w *warmSet) run(f func()) {
	defer w.n.Add(-1)
	idle := w.clock.NewTimer(warmIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // what it holds is not kept while waiting
		idle.Reset(warmIdle)
		select {
		case f = <-w.work:
		case <-idle.C():
			return
		}
	}
}
