package hub

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and runs timers: every rule and every wait reads
// time from a Clock, so that tests can drive it; nothing else in the
// package calls time.Now, time.After or time.AfterFunc (tailscale's
// tstime.Clock is the model).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d.
	NewTicker(d time.Duration) Ticker
	// AfterFunc runs f in a goroutine of its own, d from now, unless the
	// returned timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's one-shot timer (time.Timer's methods).
type Timer interface {
	// C delivers the time when the timer fires (nil for AfterFunc's).
	C() <-chan time.Time
	// Stop keeps the timer from firing; it reports whether it was pending.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was pending.
	Reset(d time.Duration) bool
}

// Ticker is a Clock's periodic timer (time.Ticker's methods).
type Ticker interface {
	// C delivers the time of each tick; ticks a slow reader misses are dropped.
	C() <-chan time.Time
	// Stop ends the ticks.
	Stop()
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (SystemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

// NewTicker returns a time.Ticker.
func (SystemClock) NewTicker(d time.Duration) Ticker { return sysTicker{time.NewTicker(d)} }

// AfterFunc returns time.AfterFunc's timer.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return sysTimer{time.AfterFunc(d, f)} }

type sysTimer struct{ t *time.Timer }

func (s sysTimer) C() <-chan time.Time        { return s.t.C }
func (s sysTimer) Stop() bool                 { return s.t.Stop() }
func (s sysTimer) Reset(d time.Duration) bool { return s.t.Reset(d) }

type sysTicker struct{ t *time.Ticker }

func (s sysTicker) C() <-chan time.Time { return s.t.C }
func (s sysTicker) Stop()               { s.t.Stop() }

// FakeClock is a Clock for tests: it stands still until Set or Advance,
// which fire the timers and tickers whose time has come, in time order.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer // pending, in no order
}

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, firing what falls due.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	due := c.dueLocked()
	c.mu.Unlock()
	fire(due, t)
}

// Advance moves the clock forward by d, firing what falls due, and returns
// the new time.
func (c *FakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	due := c.dueLocked()
	c.mu.Unlock()
	fire(due, now)
	return now
}

// Timers returns how many timers and tickers are pending: a test can wait
// until a wait has parked before it moves the clock.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// NewTimer returns a timer that fires when the clock reaches d from now.
func (c *FakeClock) NewTimer(d time.Duration) Timer {
	return c.add(&fakeTimer{c: c, ch: make(chan time.Time, 1)}, d)
}

// NewTicker returns a ticker that fires each time the clock passes another
// d from now.
func (c *FakeClock) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("hub: non-positive interval for NewTicker")
	}
	return fakeTicker{c.add(&fakeTimer{c: c, ch: make(chan time.Time, 1), period: d}, d)}
}

// AfterFunc runs f in a goroutine of its own when the clock reaches d from now.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	return c.add(&fakeTimer{c: c, f: f}, d)
}

func (c *FakeClock) add(t *fakeTimer, d time.Duration) *fakeTimer {
	c.mu.Lock()
	t.at = c.now.Add(d)
	c.timers = append(c.timers, t)
	due := c.dueLocked()
	now := c.now
	c.mu.Unlock()
	fire(due, now)
	return t
}

// dueLocked takes the timers due at c.now out of the pending list (tickers
// are put back at their next time), in time order.
func (c *FakeClock) dueLocked() []*fakeTimer {
	var due []*fakeTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		due = append(due, t)
	}
	for i := len(kept); i < len(c.timers); i++ {
		c.timers[i] = nil
	}
	c.timers = kept
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		if t.period > 0 {
			for !t.at.After(c.now) {
				t.at = t.at.Add(t.period)
			}
			c.timers = append(c.timers, t)
		}
	}
	return due
}

// removeLocked takes t out of the pending list and reports whether it was there.
func (c *FakeClock) removeLocked(t *fakeTimer) bool {
	for i, p := range c.timers {
		if p == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

func fire(due []*fakeTimer, now time.Time) {
	for _, t := range due {
		if t.f != nil {
			go t.f()
			continue
		}
		select {
		case t.ch <- now:
		default: // like a real ticker: a tick nobody read is dropped
		}
	}
}

// fakeTimer is a FakeClock's timer, ticker or AfterFunc.
type fakeTimer struct {
	c      *FakeClock
	at     time.Time
	period time.Duration // tickers
	ch     chan time.Time
	f      func()
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

// fakeTicker is a fakeTimer with a period, as a Ticker.
type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.ch }
func (k fakeTicker) Stop()               { k.t.Stop() }

// Stop also drops a time fired and not yet read, as time.Timer's Stop
// does since Go 1.23.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.drain()
	return t.c.removeLocked(t)
}

func (t *fakeTimer) drain() {
	if t.ch != nil {
		select {
		case <-t.ch:
		default:
		}
	}
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	t.drain()
	was := t.c.removeLocked(t)
	t.at = t.c.now.Add(d)
	t.c.timers = append(t.c.timers, t)
	due := t.c.dueLocked()
	now := t.c.now
	t.c.mu.Unlock()
	fire(due, now)
	return was
}
