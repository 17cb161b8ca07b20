package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// rateResult is the outcome of a fixed-duration throughput run.
type rateResult struct {
	load     cpuLoad
	ok, errs int64
	elapsed  time.Duration
	lat      []time.Duration // per-call latency, sorted
	lastErr  error
	// perCommit is how many writes shared a commit of the hub's store
	// over the run (its /metrics counters), 0 if unknown.
	perCommit float64
}

func (r *rateResult) perSec() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// cpuPerOp is the hub's CPU time per acknowledged call: a figure that
// depends less than the rate on what else runs on the machine.
func (r *rateResult) cpuPerOp() string {
	if r.cpuPer() == 0 {
		return ""
	}
	return fmt.Sprintf("; hub CPU **%s** per call", fmtDur(r.cpuPer()))
}

// batching is how many writes shared a commit, if known: the group
// commit's batch, on which a write's cost depends.
func (r *rateResult) batching() string {
	if r.perCommit == 0 {
		return ""
	}
	return fmt.Sprintf("; %.1f writes per commit", r.perCommit)
}

// cpuPer is the hub's CPU time per acknowledged call, 0 if unknown.
func (r *rateResult) cpuPer() time.Duration {
	if !r.load.known || r.ok == 0 {
		return 0
	}
	return time.Duration(r.load.hub * r.elapsed.Seconds() / float64(r.ok) * float64(time.Second))
}

// rate runs op from len(senders) goroutines for d and counts acknowledged
// calls. Each call has its own bounded deadline.
func rate(ctx context.Context, h *hubProc, p *pool, senders []*agentRef, d time.Duration, op func(ctx context.Context, c hubv1.AgentServiceClient, i, n int) error, progress func(string, ...any)) *rateResult {
	var ok, errs atomic.Int64
	var mu sync.Mutex
	res := &rateResult{}
	lats := make([][]time.Duration, len(senders))
	var wg sync.WaitGroup
	batches0, writes0, counted := h.writeBatches(ctx)
	cpu := startCPU(h)
	start := time.Now()
	end := start.Add(d)
	stop := ticker(2*time.Second, func() {
		progress("  %d ok, %d errors, %.0f/s", ok.Load(), errs.Load(), float64(ok.Load())/time.Since(start).Seconds())
	})
	for i, a := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.client(i)
			for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
				cctx, cancel := context.WithTimeout(a.authed(ctx), 10*time.Second)
				t0 := time.Now()
				err := op(cctx, c, i, n)
				cancel()
				if err != nil {
					errs.Add(1)
					mu.Lock()
					res.lastErr = err
					mu.Unlock()
					continue
				}
				lats[i] = append(lats[i], time.Since(t0))
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	stop()
	res.elapsed = time.Since(start)
	res.load = cpu.stop(h)
	res.ok, res.errs = ok.Load(), errs.Load()
	if batches1, writes1, ok := h.writeBatches(ctx); counted && ok && batches1 > batches0 {
		res.perCommit = (writes1 - writes0) / (batches1 - batches0)
	}
	for _, l := range lats {
		res.lat = append(res.lat, l...)
	}
	slices.Sort(res.lat)
	return res
}

// postOp posts a direct message from sender i to the next sender.
func postOp(senders []*agentRef) func(ctx context.Context, c hubv1.AgentServiceClient, i, n int) error {
	return func(ctx context.Context, c hubv1.AgentServiceClient, i, n int) error {
		to := senders[(i+1+n%max(1, len(senders)-1))%len(senders)].name
		_, err := c.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{to}, Body: fmt.Sprintf("throughput %d/%d", i, n)})
		return err
	}
}

func heartbeatOp(ctx context.Context, c hubv1.AgentServiceClient, _, _ int) error {
	_, err := c.Heartbeat(ctx, &hubv1.HeartbeatRequest{})
	return err
}

// idleResult is the hub's activity over an idle window.
type idleResult struct {
	waiters     int
	window      time.Duration
	cpuMsPerSec float64 // hub CPU time (user+system) per second
	syscrPerSec float64 // read syscalls per second (file and socket)
	metricPerS  float64 // the --db-metric counter per second
	hasMetric   bool
	rssKiB      int64 // at the end of the window
	wakes       int64 // wait replies during the window (should be 0)
	load        cpuLoad

	// From a separate strace window (tracing slows the traced process, so
	// it is not the window the CPU figure comes from).
	hasStrace   bool
	straceErr   error
	fcntlPerSec float64 // SQLite file-lock calls: about one per transaction
	preadPerSec float64 // database pages read from the file
}

// measureIdle samples the hub's counters over d while the client makes no
// call at all.
func measureIdle(ctx context.Context, h *hubProc, set *waiterSet, d time.Duration, metric string, straceWindow time.Duration) (*idleResult, error) {
	if h.pid == 0 {
		return nil, errNoProc
	}
	r0 := set.replies.Load()
	s0, err := h.sample(ctx, metric)
	if err != nil {
		return nil, err
	}
	cpu := startCPU(h)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(d):
	}
	load := cpu.stop(h)
	s1, err := h.sample(ctx, metric)
	if err != nil {
		return nil, err
	}
	// The two /metrics scrapes themselves are not idle: they are the same
	// in every window, and tiny against 20 s.
	sec := s1.at.Sub(s0.at).Seconds()
	res := &idleResult{
		waiters:     len(set.ws),
		window:      s1.at.Sub(s0.at),
		cpuMsPerSec: float64((s1.cpu - s0.cpu).Milliseconds()) / sec,
		syscrPerSec: float64(s1.syscr-s0.syscr) / sec,
		rssKiB:      s1.rssKiB,
		wakes:       set.replies.Load() - r0,
		load:        load,
	}
	if s0.hasMetric && s1.hasMetric {
		res.hasMetric = true
		res.metricPerS = (s1.metric - s0.metric) / sec
	}
	if straceWindow > 0 {
		t0 := time.Now()
		counts, err := straceCounts(ctx, h.pid, straceWindow, "fcntl,pread64")
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.straceErr = err
		} else {
			sec := time.Since(t0).Seconds()
			res.hasStrace = true
			res.fcntlPerSec = float64(counts["fcntl"]) / sec
			res.preadPerSec = float64(counts["pread64"]) / sec
		}
	}
	return res, nil
}
