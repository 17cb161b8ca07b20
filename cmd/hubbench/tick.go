package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// tickRow is one case of the tick scenario: ticks with due agents due.
type tickRow struct {
	agents, due int
	wall, cpu   []time.Duration // per tick, sorted
	nudged      int             // per tick (the hub's nudges_total)
	late        int             // ticks whose due agents' calls were not all made before it ran
}

// tickToken is the prefix of the tick scenario's agent tokens (agent i's
// token is the prefix and i in 6 digits, as hub bench-seed makes them).
const tickToken = "tick-token-"

// tickPhase measures orchestrator ticks of a hub serving a store of
// c.tickAgents agents: `hub bench-seed` (hidden) bulk-inserts them into a
// new data dir (100,000 CreateAgent calls would take minutes and measure
// registration), with one group of agents due per tick, each in the worst
// case (idle an hour: its health changes and it is nudged); then `hub
// serve` runs on it with --tick-interval c.tickInterval, and before each
// group's tick every agent of the group makes a call (GetDeepWork), so
// that the tick writes their presence too. A tick's duration is the hub's
// own (GetHubInfo's last tick), its CPU the hub process's while it ran.
func (b *bench) tickPhase(ctx context.Context) error {
	c := b.c
	if err := b.ensureBin(ctx); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(b.tmp, "tick-")
	if err != nil {
		return err
	}
	var groups []string
	for _, due := range c.tickDue {
		for range c.tickSamples {
			groups = append(groups, strconv.Itoa(due))
		}
	}
	b.progress("tick: hub bench-seed: %d agents, %d groups due %s apart", c.tickAgents, len(groups), c.tickInterval)
	lead := c.tickInterval + 15*time.Second // the hub's start and the first group's calls
	seed := exec.CommandContext(ctx, b.bin, "bench-seed", "--data-dir", dir, "--agents", strconv.Itoa(c.tickAgents),
		"--token-prefix", tickToken, "--groups", strings.Join(groups, ","), "--every", c.tickInterval.String(), "--lead", lead.String())
	var out, errOut bytes.Buffer
	seed.Stdout, seed.Stderr = &out, &errOut
	if err := seed.Run(); err != nil {
		return fmt.Errorf("tick: hub bench-seed: %w\n%s", err, errOut.String())
	}
	var seeded struct{ First time.Time }
	if err := json.Unmarshal(out.Bytes(), &seeded); err != nil {
		return fmt.Errorf("tick: hub bench-seed printed %q: %w", out.String(), err)
	}
	h, err := startHub(ctx, b.bin, dir, c.hubEnv, c.hubCPUs, "--tick-interval", c.tickInterval.String(), "--rate-limit", "0", "--read-rate-limit", "0")
	if err != nil {
		return err
	}
	defer h.stop()
	p, err := dial(ctx, h.grpcAddr, h.token, 8)
	if err != nil {
		return err
	}
	defer p.close()

	// The ticks run every interval from the hub's first: once that is
	// seen, the tick of each group is known in advance, and the hub is
	// asked (GetHubInfo counts the agents) only around it.
	info, err := waitTick(ctx, p, time.Time{}, time.Time{}, 2*c.tickInterval+time.Minute)
	if err != nil {
		return err
	}
	last := info.GetLastTickAt().AsTime()
	next := 1 // the first agent of the next group
	g := 0
	for _, due := range c.tickDue {
		row := tickRow{agents: c.tickAgents, due: due}
		for range c.tickSamples {
			at := seeded.First.Add(time.Duration(g) * c.tickInterval)
			expect := last.Add(time.Duration((at.Sub(last)+c.tickInterval-1)/c.tickInterval) * c.tickInterval)
			ids := make([]*agentRef, due)
			for i := range ids {
				tok := fmt.Sprintf("%s%06d", tickToken, next+i)
				ids[i] = &agentRef{name: strconv.Itoa(next + i), token: tok, md: bearer(tok)}
			}
			next += due
			if err := forEach(ctx, ids, 32, func(ctx context.Context, i int, a *agentRef) error {
				cctx, cancel := context.WithTimeout(a.authed(ctx), 30*time.Second)
				defer cancel()
				_, err := p.client(i).GetDeepWork(cctx, &hubv1.GetDeepWorkRequest{})
				return err
			}); err != nil {
				return fmt.Errorf("tick: calls of the due agents: %w", err)
			}
			if time.Now().After(expect) {
				row.late++ // its tick may have run before all the calls
			}
			nudges0, _ := scrapeMetric(ctx, h.metricsURL(), "hub_nudges_total")
			sleep(ctx, time.Until(expect.Add(-200*time.Millisecond)))
			cpu0, _ := threadsCPU(h.pid)
			info, err := waitTick(ctx, p, at, expect, 2*c.tickInterval+time.Minute)
			if err != nil {
				return err
			}
			cpu1, _ := threadsCPU(h.pid)
			last = info.GetLastTickAt().AsTime()
			nudges1, _ := scrapeMetric(ctx, h.metricsURL(), "hub_nudges_total")
			row.wall = append(row.wall, time.Duration(info.GetLastTickMicros())*time.Microsecond)
			row.cpu = append(row.cpu, cpu1-cpu0)
			row.nudged = int(nudges1 - nudges0)
			g++
		}
		slices.Sort(row.wall)
		slices.Sort(row.cpu)
		b.progress("tick: %d agents, %d due: median %s (hub CPU %s), max %s; %d nudged per tick",
			row.agents, due, fmtDur(percentile(row.wall, .5)), fmtDur(percentile(row.cpu, .5)), fmtDur(row.wall[len(row.wall)-1]), row.nudged)
		b.res.ticks = append(b.res.ticks, row)
	}
	return nil
}

// waitTick waits (at most limit) until the hub has run a tick at or after
// at, and returns its GetHubInfo. It asks from expect on (the tick's
// expected start, or at once when zero), then less and less often.
func waitTick(ctx context.Context, p *pool, at, expect time.Time, limit time.Duration) (*hubv1.GetHubInfoResponse, error) {
	deadline := time.Now().Add(limit)
	sleep(ctx, time.Until(expect))
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		info, err := p.hubInfo(cctx)
		cancel()
		if err == nil && info.GetLastTickAt() != nil && !info.GetLastTickAt().AsTime().Before(at) {
			return info, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("tick: no tick ran after %s within %s (last error: %v)", at.Format(time.TimeOnly), limit, err)
		}
	}
}

// threadsCPU returns the CPU time of every thread of pid so far, from
// /proc/PID/task/*/schedstat (nanoseconds, where /proc/PID/stat counts
// 10 ms ticks).
func threadsCPU(pid int) (time.Duration, error) {
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(dirs) == 0 {
		return 0, fmt.Errorf("no threads of %d: %v", pid, err)
	}
	var sum int64
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += n
		}
	}
	return time.Duration(sum), nil
}
