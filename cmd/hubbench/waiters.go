package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// waitTimeoutSeconds is what each parked waiter asks for: the hub's cap.
const waitTimeoutSeconds = 60

// wakeEvent is a wait reply that carried messages.
type wakeEvent struct {
	at  time.Time
	ids []string
}

// waiter is one agent parked in WaitForMessages in a loop: each reply is
// reported on woke and the wait is issued again with the new cursor.
type waiter struct {
	a      *agentRef
	client hubv1.AgentServiceClient
	cancel context.CancelFunc
	done   chan struct{}
	// issued is when the current wait call was sent (Unix ns), 0 while no
	// call is outstanding.
	issued atomic.Int64
	woke   chan wakeEvent
}

// waiterSet holds the parked waiters of a run.
type waiterSet struct {
	p        *pool
	ws       []*waiter
	timeouts atomic.Int64 // replies with timed_out
	replies  atomic.Int64 // all replies
	errs     atomic.Int64
	lastErr  atomic.Value // error
}

// park starts waiters for agents (in order) until the set holds n.
func (s *waiterSet) park(ctx context.Context, agents []*agentRef, n int) {
	for i := len(s.ws); i < n; i++ {
		wctx, cancel := context.WithCancel(ctx)
		w := &waiter{a: agents[i], client: s.p.client(i), cancel: cancel, done: make(chan struct{}), woke: make(chan wakeEvent, 8)}
		s.ws = append(s.ws, w)
		go s.loop(wctx, w)
	}
}

// unpark cancels the newest waiters until n remain, and waits for them.
func (s *waiterSet) unpark(n int) {
	if n >= len(s.ws) {
		return
	}
	gone := s.ws[n:]
	for _, w := range gone {
		w.cancel()
	}
	for _, w := range gone {
		<-w.done
	}
	s.ws = s.ws[:n]
}

func (s *waiterSet) loop(ctx context.Context, w *waiter) {
	defer close(w.done)
	timeout := int32(waitTimeoutSeconds)
	cursor := ""
	for ctx.Err() == nil {
		// The call's own deadline is past the wait's timeout: the hub
		// answers timed_out, never DEADLINE_EXCEEDED.
		cctx, cancel := context.WithTimeout(w.a.authed(ctx), (waitTimeoutSeconds+15)*time.Second)
		w.issued.Store(time.Now().UnixNano())
		r, err := w.client.WaitForMessages(cctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: &timeout, AfterId: cursor})
		at := time.Now()
		w.issued.Store(0)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.errs.Add(1)
			s.lastErr.Store(err)
			select { // back off; bounded by ctx
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		s.replies.Add(1)
		cursor = r.GetCursor()
		if r.GetTimedOut() {
			s.timeouts.Add(1)
		}
		if len(r.GetMessages()) > 0 {
			ev := wakeEvent{at: at}
			for _, m := range r.GetMessages() {
				ev.ids = append(ev.ids, m.GetId())
			}
			select {
			case w.woke <- ev:
			default: // nobody is listening for this one
			}
		}
	}
}

// waitParked waits until the hub reports at least n parked waits (bounded).
// It reads the hub_parked_waiters gauge at metricsURL when there is one (a
// cheap scrape), else GetHubInfo (which lists every agent) twice a second.
func (s *waiterSet) waitParked(ctx context.Context, metricsURL string, n int, limit time.Duration, progress func(string, ...any)) error {
	deadline := time.Now().Add(limit)
	last := time.Now()
	useMetric := metricsURL != ""
	for {
		parked, interval := int64(-1), 500*time.Millisecond
		if useMetric {
			if v, ok := scrapeMetric(ctx, metricsURL, "hub_parked_waiters"); ok {
				parked, interval = int64(v), 100*time.Millisecond
			} else {
				useMetric = false
			}
		}
		if parked < 0 {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			info, err := s.p.hubInfo(cctx)
			cancel()
			if err != nil && ctx.Err() == nil && time.Now().Before(deadline) {
				progress("  get hub info: %v (retrying)", err)
				sleep(ctx, interval)
				continue
			} else if err != nil {
				return fmt.Errorf("get hub info: %w", err)
			}
			parked = info.GetParkedWaiters()
		}
		if int(parked) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			e, _ := s.lastErr.Load().(error)
			return fmt.Errorf("only %d of %d waits parked after %s (wait errors: %d, last: %v)", parked, n, limit, s.errs.Load(), e)
		}
		if time.Since(last) > 2*time.Second {
			progress("  parked %d/%d", parked, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// wakeOpts tunes a wake-latency run.
type wakeOpts struct {
	samples    int
	maxTime    time.Duration // stop sampling after this long
	gap        time.Duration // a waiter must have been re-parked this long before it is posted to
	concurrent bool          // post every spacing without waiting for the wake (poll mode)
	spacing    time.Duration
	perSample  time.Duration // give up on one wake after this long
}

// wakeResult is the outcome of a wake-latency run.
type wakeResult struct {
	lat       []time.Duration // post acknowledged → waiter's reply received
	sendLat   []time.Duration // post sent → waiter's reply received
	postRTT   []time.Duration // PostMessage round trip
	lost      int             // wakes not seen within perSample
	postErrs  int
	beforeAck int // replies that arrived before the post's own reply (counted as 0)
	elapsed   time.Duration
}

// sampleWake posts direct messages from sender to random parked waiters and
// measures, for each, the time from the PostMessage reply to the waiter's
// reply carrying that message.
func (s *waiterSet) sampleWake(ctx context.Context, sender *agentRef, senderClient hubv1.AgentServiceClient, o wakeOpts, progress func(string, ...any)) (*wakeResult, error) {
	if len(s.ws) == 0 {
		return nil, fmt.Errorf("no parked waiters")
	}
	res := &wakeResult{}
	var mu sync.Mutex
	busy := make(map[*waiter]bool)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	lastProgress := start

	// pick returns a parked, idle waiter, waiting (bounded) for one.
	pick := func() *waiter {
		deadline := time.Now().Add(5 * time.Second)
		for tries := 0; ; tries++ {
			w := s.ws[rng.IntN(len(s.ws))]
			mu.Lock()
			b := busy[w]
			mu.Unlock()
			iss := w.issued.Load()
			if !b && iss != 0 && time.Since(time.Unix(0, iss)) >= o.gap {
				return w
			}
			if time.Now().After(deadline) || ctx.Err() != nil || time.Since(start) > o.maxTime {
				return nil
			}
			if tries%min(len(s.ws), 16) == 0 {
				time.Sleep(max(o.gap/4, 100*time.Microsecond))
			}
		}
	}

	one := func(w *waiter, i int) {
		defer func() { mu.Lock(); delete(busy, w); mu.Unlock() }()
		for drained := false; !drained; { // stale events of earlier samples
			select {
			case <-w.woke:
			default:
				drained = true
			}
		}
		cctx, cancel := context.WithTimeout(sender.authed(ctx), 30*time.Second)
		t0 := time.Now()
		r, err := senderClient.PostMessage(cctx, &hubv1.PostMessageRequest{To: []string{w.a.name}, Body: fmt.Sprintf("wake sample %d", i)})
		t1 := time.Now()
		cancel()
		if err != nil {
			mu.Lock()
			res.postErrs++
			mu.Unlock()
			return
		}
		id := r.GetMessage().GetId()
		timer := time.NewTimer(o.perSample)
		defer timer.Stop()
		for {
			select {
			case ev := <-w.woke:
				if !slices.Contains(ev.ids, id) {
					continue
				}
				lat := ev.at.Sub(t1)
				mu.Lock()
				if lat < 0 {
					res.beforeAck++
					lat = 0
				}
				res.lat = append(res.lat, lat)
				res.sendLat = append(res.sendLat, ev.at.Sub(t0))
				res.postRTT = append(res.postRTT, t1.Sub(t0))
				mu.Unlock()
				return
			case <-timer.C:
				mu.Lock()
				res.lost++
				mu.Unlock()
				return
			case <-ctx.Done():
				return
			}
		}
	}

	var wg sync.WaitGroup
	for i := 0; i < o.samples; i++ {
		if ctx.Err() != nil || time.Since(start) > o.maxTime {
			break
		}
		w := pick()
		if w == nil {
			break
		}
		mu.Lock()
		busy[w] = true
		mu.Unlock()
		if o.concurrent {
			wg.Add(1)
			go func(i int) { defer wg.Done(); one(w, i) }(i)
			time.Sleep(o.spacing)
		} else {
			one(w, i)
		}
		if time.Since(lastProgress) > 2*time.Second {
			mu.Lock()
			progress("  samples: %d/%d", len(res.lat), o.samples)
			mu.Unlock()
			lastProgress = time.Now()
		}
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(res.lat) == 0 {
		return nil, fmt.Errorf("no wake was measured (post errors %d, lost %d)", res.postErrs, res.lost)
	}
	return res, nil
}

// percentile returns the nearest-rank q-quantile (0..1) of sorted ds.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
