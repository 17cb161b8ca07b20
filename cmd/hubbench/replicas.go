package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// replicaRun is the outcome of the PostgreSQL run (--database-url): the
// throughput of one replica and of two on the same database, the wake
// latency of a waiter on replica B for a post on replica A (and, beside
// it, on B itself), and B's idle cost with and without parked waiters.
type replicaRun struct {
	machine     string
	rates       []replicaRate
	wake        []replicaWake
	idle        []*idleResult
	load        string // /proc/loadavg at the start
	loadAtEnd   string
	maxReplicas int
}

// replicaRate is posts/s and heartbeats/s over some replicas.
type replicaRate struct {
	replicas          int
	posts, heartbeats combinedRate
}

// combinedRate adds up the rate runs of several replicas run at once.
type combinedRate struct {
	ok, errs int64
	elapsed  time.Duration
	hubCPU   time.Duration // all replicas' CPU time over the run
	lat      []time.Duration
	lastErr  error
}

func (r combinedRate) perSec() float64 { return float64(r.ok) / r.elapsed.Seconds() }

func (r combinedRate) cpuPerOp() time.Duration {
	if r.ok == 0 {
		return 0
	}
	return r.hubCPU / time.Duration(r.ok)
}

// replicaWake is one wake-latency run.
type replicaWake struct {
	waiters int
	via     string // the replica the post went through
	r       *wakeResult
}

// runReplicas measures hub replicas on the PostgreSQL database at
// c.databaseURL: one replica, then (with --replicas 2) two.
func runReplicas(ctx context.Context, c *config, progress func(string, ...any), stdout io.Writer) error {
	res := &replicaRun{machine: machineInfo(), load: loadAvg(), maxReplicas: c.replicas}
	tmp, err := os.MkdirTemp("", "hubbench-pg-")
	if err != nil {
		return err
	}
	if c.keepDataDir {
		defer progress("kept %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := c.hubBin
	if bin == "" {
		progress("building ./cmd/hub")
		if bin, err = buildHub(ctx, tmp); err != nil {
			return err
		}
	}
	nWaiters := slices.Max(append(slices.Clone(c.waiters), c.memWaiters))
	args := []string{"--database-url", c.databaseURL, "--rate-limit", "0", "--max-waiters", strconv.Itoa(nWaiters + c.senders + 100)}
	if c.pollInterval > 0 {
		args = append(args, "--poll-interval", c.pollInterval.String())
	}
	var hubs []*hubProc
	var pools []*pool
	defer func() {
		for _, p := range pools {
			p.close()
		}
		for _, h := range hubs {
			h.stop()
		}
	}()
	start := func(name string) error {
		dir := filepath.Join(tmp, name)
		if len(hubs) > 0 {
			// One admin token for all replicas.
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			tok, err := os.ReadFile(filepath.Join(hubs[0].dataDir, "admin.token"))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "admin.token"), tok, 0o600); err != nil {
				return err
			}
		}
		progress("starting replica %s: %s serve %v", name, bin, args)
		h, err := startHub(ctx, bin, dir, c.hubEnv, c.hubCPUs, args...)
		if err != nil {
			return err
		}
		hubs = append(hubs, h)
		p, err := dial(ctx, h.grpcAddr, h.token, c.conns+1)
		if err != nil {
			return err
		}
		pools = append(pools, p)
		return nil
	}
	if err := start("a"); err != nil {
		return err
	}
	progress("creating %d agents on replica a", nWaiters+c.senders+1)
	all, err := createAgents(ctx, pools[0], runPrefix(), nWaiters+c.senders+1, c.createConc, progress)
	if err != nil {
		return err
	}
	waiters, senders, sender := all[:nWaiters], all[nWaiters:nWaiters+c.senders], all[len(all)-1]

	for n := 1; n <= c.replicas; n++ {
		if n > len(hubs) {
			if err := start(string(rune('a' + n - 1))); err != nil {
				return err
			}
		}
		rr := replicaRate{replicas: n}
		progress("posts/s on %d replica(s): %d senders for %s", n, c.senders, c.duration)
		rr.posts = spread(ctx, hubs[:n], pools[:n], senders, c.duration, postOp, progress)
		progress("posts/s: %.0f (%d errors, last %v)", rr.posts.perSec(), rr.posts.errs, rr.posts.lastErr)
		progress("heartbeats/s on %d replica(s)", n)
		rr.heartbeats = spread(ctx, hubs[:n], pools[:n], senders, c.duration, func([]*agentRef) rateOp { return heartbeatOp }, progress)
		progress("heartbeats/s: %.0f (%d errors, last %v)", rr.heartbeats.perSec(), rr.heartbeats.errs, rr.heartbeats.lastErr)
		res.rates = append(res.rates, rr)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}

	// Waiters parked on the last replica; posts through the first (and,
	// for comparison, through the waiters' own replica).
	hA, hB := hubs[0], hubs[len(hubs)-1]
	pA, pB := pools[0], pools[len(pools)-1]
	set := &waiterSet{p: pB}
	wctx, cancelWaiters := context.WithCancel(ctx)
	defer func() { cancelWaiters(); set.unpark(0) }()
	sleep(ctx, c.settle)
	progress("idle %s on replica %s with 0 parked waiters", c.idle, filepath.Base(hB.dataDir))
	idle, err := measureIdle(ctx, hB, set, c.idle, c.dbMetric, 0)
	if err != nil {
		return err
	}
	res.idle = append(res.idle, idle)
	set.park(wctx, waiters, c.memWaiters)
	if err := set.waitParked(ctx, hB.metricsURL(), c.memWaiters, 60*time.Second, progress); err != nil {
		return err
	}
	sleep(ctx, c.settle)
	progress("idle %s with %d parked waiters", c.idle, c.memWaiters)
	if idle, err = measureIdle(ctx, hB, set, c.idle, c.dbMetric, 0); err != nil {
		return err
	}
	res.idle = append(res.idle, idle)

	for _, n := range slices.Backward(c.waiters) {
		if len(set.ws) != n {
			set.unpark(0)
			set.park(wctx, waiters, n)
			if err := set.waitParked(ctx, hB.metricsURL(), n, 60*time.Second, progress); err != nil {
				return err
			}
			sleep(ctx, min(c.settle, time.Second))
		}
		vias := []struct {
			name string
			p    *pool
		}{{filepath.Base(hA.dataDir), pA}}
		if hB != hA {
			vias = append(vias, struct {
				name string
				p    *pool
			}{filepath.Base(hB.dataDir), pB})
		}
		for _, via := range vias {
			o := wakeOpts{samples: c.samples, maxTime: 2 * time.Minute, gap: c.reparkGap, perSample: 10 * time.Second}
			progress("wake latency: %d waiters on %s, posts via %s, %d samples", n, filepath.Base(hB.dataDir), via.name, o.samples)
			r, err := set.sampleWake(ctx, sender, via.p.client(c.conns), o, progress)
			if err != nil {
				return fmt.Errorf("wake latency via %s: %w", via.name, err)
			}
			slices.Sort(r.lat)
			progress("p50 %s p99 %s (%d samples, %d lost)", fmtDur(percentile(r.lat, .5)), fmtDur(percentile(r.lat, .99)), len(r.lat), r.lost)
			res.wake = append(res.wake, replicaWake{waiters: n, via: via.name, r: r})
		}
	}
	res.loadAtEnd = loadAvg()
	res.write(stdout, c)
	return nil
}

// rateOp is one call of a throughput run.
type rateOp = func(ctx context.Context, c hubv1.AgentServiceClient, i, n int) error

// spread runs a throughput run on several replicas at once, the senders
// split evenly between them, and adds up the results.
func spread(ctx context.Context, hubs []*hubProc, pools []*pool, senders []*agentRef, d time.Duration, op func([]*agentRef) rateOp, progress func(string, ...any)) combinedRate {
	parts := make([]*rateResult, len(hubs))
	var wg sync.WaitGroup
	for i := range hubs {
		share := senders[i*len(senders)/len(hubs) : (i+1)*len(senders)/len(hubs)]
		wg.Go(func() { parts[i] = rate(ctx, hubs[i], pools[i], share, d, op(share), progress) })
	}
	wg.Wait()
	var out combinedRate
	for _, r := range parts {
		out.ok += r.ok
		out.errs += r.errs
		out.elapsed = max(out.elapsed, r.elapsed)
		out.hubCPU += time.Duration(r.load.hub * r.elapsed.Seconds() * float64(time.Second))
		out.lat = append(out.lat, r.lat...)
		if r.lastErr != nil {
			out.lastErr = r.lastErr
		}
	}
	slices.Sort(out.lat)
	return out
}

// loadAvg is the machine's load average (1, 5, 15 min), from /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	var l1, l5, l15 string
	fmt.Sscan(string(b), &l1, &l5, &l15)
	return l1 + " " + l5 + " " + l15
}

// write prints the PostgreSQL run as Markdown.
func (r *replicaRun) write(w io.Writer, c *config) {
	fmt.Fprintf(w, "## hubbench on PostgreSQL\n\nMachine: %s; load average %s at the start, %s at the end.\n\n", r.machine, r.load, r.loadAtEnd)
	fmt.Fprintf(w, "| replicas | posts/s | hub CPU per post | post p50 / p99 | heartbeats/s | hub CPU per heartbeat | errors |\n|---|---|---|---|---|---|---|\n")
	for _, rr := range r.rates {
		fmt.Fprintf(w, "| %d | %.0f | %s | %s / %s | %.0f | %s | %d |\n", rr.replicas,
			rr.posts.perSec(), fmtDur(rr.posts.cpuPerOp()), fmtDur(percentile(rr.posts.lat, .5)), fmtDur(percentile(rr.posts.lat, .99)),
			rr.heartbeats.perSec(), fmtDur(rr.heartbeats.cpuPerOp()), rr.posts.errs+rr.heartbeats.errs)
	}
	fmt.Fprintf(w, "\n%d senders, %s per run, spread evenly over the replicas; hub CPU is all replicas' user+system time over the acknowledged calls (PostgreSQL's own CPU not included).\n\n", c.senders, c.duration)
	fmt.Fprintf(w, "| waiters parked on %s | post via | samples | p50 | p99 | max | lost |\n|---|---|---|---|---|---|---|\n", "the last replica")
	for _, wk := range r.wake {
		fmt.Fprintf(w, "| %d | %s | %d | %s | %s | %s | %d |\n", wk.waiters, wk.via, len(wk.r.lat),
			fmtDur(percentile(wk.r.lat, .5)), fmtDur(percentile(wk.r.lat, .99)), fmtDur(percentile(wk.r.lat, 1)), wk.r.lost)
	}
	fmt.Fprintf(w, "\nWake latency: from the post's acknowledgement to the waiter's reply with it.\n\n")
	fmt.Fprintf(w, "| parked waiters | idle hub CPU (ms/s) | wait replies in the window |\n|---|---|---|\n")
	for _, id := range r.idle {
		fmt.Fprintf(w, "| %d | %.2f | %d |\n", id.waiters, id.cpuMsPerSec, id.wakes)
	}
	fmt.Fprintf(w, "\nIdle windows of %s on the waiters' replica.\n", c.idle)
}
