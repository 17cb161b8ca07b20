package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// bench runs the scenarios in phases:
//
//  1. notify mode: create the agents, restart the hub on the same data dir
//     (a clean process), idle window with 0 parked waiters, park the memory
//     waiters, RSS, idle window with them parked, wake latency at each size;
//  2. throughput (posts/s, heartbeats/s) with no waiter parked;
//  3. backlog: heartbeats/s of agents with no unread message, then again
//     once each has a backlog of unread channel messages;
//  4. poll mode: restart with --wait-mode poll, idle windows with 0 and N
//     parked waiters, wake latency at N;
//  5. tick: orchestrator ticks of another hub on a large seeded store,
//     after the first hub has stopped (tick.go).
type bench struct {
	c        *config
	progress func(string, ...any)
	res      *results

	tmp     string
	bin     string
	dataDir string
	hub     *hubProc
	p       *pool

	waiterAgents  []*agentRef
	senderAgents  []*agentRef
	backlogAgents []*agentRef
	sender        *agentRef
}

func (b *bench) cleanup() {
	if b.p != nil {
		b.p.close()
	}
	if b.hub != nil && b.hub.cmd != nil {
		b.hub.stop()
	}
	if b.tmp != "" {
		if b.c.keepDataDir {
			b.progress("kept %s", b.tmp)
		} else {
			os.RemoveAll(b.tmp)
		}
	}
}

func (b *bench) need(s string) bool { return b.c.scenarios[s] }

func (b *bench) run(ctx context.Context) error {
	c := b.c
	b.res.machine = machineInfo()
	nWaiters := 0
	if b.need("wake") && len(c.waiters) > 0 {
		nWaiters = c.waiters[len(c.waiters)-1]
	}
	if b.need("memory") || b.need("idle") {
		nWaiters = max(nWaiters, c.memWaiters)
	}
	if b.need("poll") {
		nWaiters = max(nWaiters, c.pollWaiters)
	}
	maxWaiters := strconv.Itoa(nWaiters + c.senders + 100)
	var hubArgs []string
	if c.pollInterval > 0 {
		hubArgs = append(hubArgs, "--poll-interval", c.pollInterval.String())
	}
	// The per-agent write and read budgets are policy, not the hub's
	// capacity: 32 senders at 50 writes/s, or one waiter re-waiting after
	// each of thousands of wake-ups, would measure the limiter.
	hubArgs = append(hubArgs, "--rate-limit", "0", "--read-rate-limit", "0")
	notifyArgs := append([]string{"--max-waiters", maxWaiters}, hubArgs...)

	// The hub under test (the tick scenario alone starts its own).
	needHub := slices.ContainsFunc(allScenarios, func(s string) bool { return s != "tick" && b.need(s) })
	if !needHub {
		return b.tickPhase(ctx)
	}
	if c.addr == "" {
		if err := b.ensureBin(ctx); err != nil {
			return err
		}
		b.dataDir = b.tmp + "/data"
		if err := b.startHub(ctx, "notify", notifyArgs); err != nil {
			return err
		}
	} else {
		b.hub = &hubProc{grpcAddr: c.addr, pid: c.pid, token: c.token}
		if err := b.connect(ctx); err != nil {
			return err
		}
		b.res.external = true
	}

	// Agents: the waiters, the throughput senders, the backlog senders, one
	// wake sender (who also posts the backlog).
	prefix := runPrefix()
	nBacklog := 0
	if b.need("backlog") {
		nBacklog = c.senders
	}
	n := nWaiters + c.senders + nBacklog + 1
	b.progress("creating %d agents through the AdminService (%d at a time)", n, c.createConc)
	all, err := createAgents(ctx, b.p, prefix, n, c.createConc, b.progress)
	if err != nil {
		return err
	}
	b.waiterAgents, all = all[:nWaiters], all[nWaiters:]
	b.senderAgents, all = all[:c.senders], all[c.senders:]
	b.backlogAgents, b.sender = all[:nBacklog], all[nBacklog]

	if b.need("wake") || b.need("memory") || b.need("idle") {
		if b.hub.cmd != nil {
			// A fresh process: RSS "before" holds no garbage of the agent creation.
			b.progress("restarting the hub on the same data dir for a clean process")
			if err := b.startHub(ctx, "notify", notifyArgs); err != nil {
				return err
			}
		}
		if err := b.waitPhase(ctx, "notify", c.memWaiters); err != nil {
			return err
		}
	}
	if b.need("throughput") {
		if err := b.throughputPhase(ctx); err != nil {
			return err
		}
	}
	if b.need("backlog") {
		if err := b.backlogPhase(ctx, prefix); err != nil {
			return err
		}
	}
	if b.need("poll") {
		args := append([]string{"--max-waiters", maxWaiters, "--wait-mode", "poll"}, hubArgs...)
		if err := b.startHub(ctx, "poll", args); err != nil {
			return err
		}
		if err := b.waitPhase(ctx, "poll", c.pollWaiters); err != nil {
			return err
		}
	}
	if b.need("tick") {
		if b.hub.cmd != nil { // the tick's hub gets the CPUs alone
			b.p.close()
			b.p = nil
			b.hub.stop()
		}
		return b.tickPhase(ctx)
	}
	return nil
}

// ensureBin makes the temporary dir and the hub binary (--hub-bin, or
// ./cmd/hub built there).
func (b *bench) ensureBin(ctx context.Context) error {
	var err error
	if b.tmp == "" {
		if b.tmp, err = os.MkdirTemp("", "hubbench-"); err != nil {
			return err
		}
	}
	if b.bin != "" {
		return nil
	}
	if b.bin = b.c.hubBin; b.bin == "" {
		b.progress("building ./cmd/hub")
		b.bin, err = buildHub(ctx, b.tmp)
	}
	return err
}

// startHub (re)starts the child hub on b.dataDir and connects the pool.
func (b *bench) startHub(ctx context.Context, mode string, args []string) error {
	if b.p != nil {
		b.p.close()
		b.p = nil
	}
	if b.hub != nil {
		b.hub.stop()
	}
	b.progress("starting the hub (%s mode): %s serve %v %v", mode, b.bin, args, b.c.hubEnv)
	h, err := startHub(ctx, b.bin, b.dataDir, b.c.hubEnv, b.c.hubCPUs, args...)
	if err != nil {
		return err
	}
	b.hub = h
	return b.connect(ctx)
}

func (b *bench) connect(ctx context.Context) error {
	p, err := dial(ctx, b.hub.grpcAddr, b.hub.token, b.c.conns+1)
	if err != nil {
		return err
	}
	b.p = p
	return nil
}

// senderClient is the connection the wake sender uses: its own, not shared
// with the waiters.
func (b *bench) senderClient() hubv1.AgentServiceClient { return b.p.client(b.c.conns) }

// waitPhase runs the idle, memory and wake-latency measurements in one mode.
// parkN waiters are parked for the memory and idle runs.
func (b *bench) waitPhase(ctx context.Context, mode string, parkN int) error {
	c := b.c
	poll := mode == "poll"
	doMem := b.hub.pid != 0 && (poll || b.need("memory"))
	doIdle := b.hub.pid != 0 && (poll || b.need("idle"))
	sizes := c.waiters
	if poll {
		sizes = []int{parkN}
	} else if !b.need("wake") {
		sizes = nil
	}
	if b.hub.pid == 0 && (b.need("memory") || b.need("idle")) {
		b.progress("skipping memory and idle cost: %v", errNoProc)
	}

	// Warm-up: every waiter agent authenticates and peeks once, so that
	// what the hub keeps per agent (presence, caches) is there before
	// "before" is read.
	b.progress("%s: warm-up peek by %d agents", mode, len(b.waiterAgents))
	zero := int32(0)
	if err := forEach(ctx, b.waiterAgents, 32, func(ctx context.Context, i int, a *agentRef) error {
		cctx, cancel := context.WithTimeout(a.authed(ctx), 10*time.Second)
		defer cancel()
		_, err := b.p.client(i).WaitForMessages(cctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: &zero})
		return err
	}); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	set := &waiterSet{p: b.p}
	defer set.unpark(0)
	// All waiters end with ctx too.
	wctx, cancelWaiters := context.WithCancel(ctx)
	defer cancelWaiters()

	if doMem || doIdle {
		sleep(ctx, c.settle)
		var before procStats
		if doIdle {
			b.progress("%s: idle %s with 0 parked waiters", mode, c.idle)
			r, err := measureIdle(ctx, b.hub, set, c.idle, c.dbMetric, b.straceWindow())
			if err != nil {
				return err
			}
			b.res.idle = append(b.res.idle, idleRow{mode: mode, r: r})
		}
		rt0, rtOK0 := b.hub.runtimeSample(ctx)
		before, err := b.hub.sample(ctx, "")
		if err != nil {
			return err
		}
		b.progress("%s: parking %d waiters over %d connections", mode, parkN, c.conns)
		t0 := time.Now()
		set.park(wctx, b.waiterAgents, parkN)
		if err := set.waitParked(ctx, b.hub.metricsURL(), parkN, 60*time.Second, b.progress); err != nil {
			return err
		}
		b.progress("%s: %d parked in %s", mode, parkN, time.Since(t0).Round(time.Millisecond))
		sleep(ctx, c.settle)
		after, err := b.hub.sample(ctx, "")
		if err != nil {
			return err
		}
		if doMem {
			row := memRow{mode: mode, waiters: parkN, before: before.rssKiB, after: after.rssKiB}
			if rt1, ok := b.hub.runtimeSample(ctx); ok && rtOK0 {
				row.runtime = runtimeDelta{stack: rt1[0] - rt0[0], heap: rt1[1] - rt0[1], goroutines: rt1[2] - rt0[2], known: true}
			}
			b.res.mem = append(b.res.mem, row)
			b.progress("%s: RSS %d KiB → %d KiB", mode, before.rssKiB, after.rssKiB)
		}
		if doIdle {
			b.progress("%s: idle %s with %d parked waiters", mode, c.idle, parkN)
			r, err := measureIdle(ctx, b.hub, set, c.idle, c.dbMetric, b.straceWindow())
			if err != nil {
				return err
			}
			b.res.idle = append(b.res.idle, idleRow{mode: mode, r: r})
			if doMem {
				b.res.mem[len(b.res.mem)-1].afterIdle = r.rssKiB
			}
			b.progress("%s: RSS %d KiB at the end of the idle window", mode, r.rssKiB)
		}
	}

	// Wake latency, largest size first: the waiters parked above serve it.
	for _, n := range slices.Backward(sizes) {
		if len(set.ws) != n {
			set.unpark(0)
			set.park(wctx, b.waiterAgents, n)
			if err := set.waitParked(ctx, b.hub.metricsURL(), n, 60*time.Second, b.progress); err != nil {
				return err
			}
			sleep(ctx, min(c.settle, time.Second))
		}
		o := wakeOpts{samples: c.samples, maxTime: 2 * time.Minute, gap: c.reparkGap, perSample: 10 * time.Second}
		if poll {
			pi := c.pollInterval
			if pi == 0 {
				pi = 5 * time.Second
			}
			// Posts overlap: each wake takes up to a poll interval.
			o = wakeOpts{samples: c.pollSamples, maxTime: 2 * time.Minute, gap: c.reparkGap, concurrent: true,
				spacing: 100 * time.Millisecond, perSample: pi + 10*time.Second}
		}
		b.progress("%s: wake latency with %d parked waiters, %d samples", mode, n, o.samples)
		t0, e0 := set.timeouts.Load(), set.errs.Load()
		cpu := startCPU(b.hub)
		r, err := set.sampleWake(ctx, b.sender, b.senderClient(), o, b.progress)
		if err != nil {
			return fmt.Errorf("wake latency (%s, %d waiters): %w", mode, n, err)
		}
		b.res.wake = append(b.res.wake, wakeRow{mode: mode, waiters: n, r: r, load: cpu.stop(b.hub), timeouts: set.timeouts.Load() - t0, waitErrs: set.errs.Load() - e0})
		slices.Sort(r.lat)
		b.progress("%s: p50 %s p99 %s (%d samples in %s)", mode, fmtDur(percentile(r.lat, .5)), fmtDur(percentile(r.lat, .99)), len(r.lat), r.elapsed.Round(time.Millisecond))
	}
	if e := set.errs.Load(); e > 0 {
		err, _ := set.lastErr.Load().(error)
		b.progress("%s: %d wait calls failed; last: %v", mode, e, err)
	}
	return nil
}

func (b *bench) throughputPhase(ctx context.Context) error {
	c := b.c
	b.progress("posts/s: %d senders for %s", c.senders, c.duration)
	r := rate(ctx, b.hub, b.p, b.senderAgents, c.duration, postOp(b.senderAgents), b.progress)
	b.res.posts = r
	b.progress("posts/s: %.0f (%d errors, last %v)", r.perSec(), r.errs, r.lastErr)
	b.progress("heartbeats/s: %d senders for %s", c.senders, c.duration)
	r = rate(ctx, b.hub, b.p, b.senderAgents, c.duration, heartbeatOp, b.progress)
	b.res.heartbeats = r
	b.progress("heartbeats/s: %.0f (%d errors, last %v)", r.perSec(), r.errs, r.lastErr)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// straceWindow is how long to trace the hub's syscalls in each idle window
// (0: not at all).
func (b *bench) straceWindow() time.Duration {
	switch b.c.strace {
	case "off":
		return 0
	case "auto":
		if _, err := exec.LookPath("strace"); err != nil || b.hub.pid == 0 {
			return 0
		}
	}
	return b.c.straceWindow
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
