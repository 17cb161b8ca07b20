package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// backlogResult compares heartbeats of agents without and with a backlog of
// unread messages: a heartbeat's reply reports the unread count, and that
// count must not cost more as the backlog grows.
type backlogResult struct {
	none, with *rateResult
	perAgent   int     // unread messages each agent had in the second run
	posts      int     // channel posts that built the backlog
	build      float64 // seconds they took
	buildLoad  cpuLoad
}

// backlogPhase measures heartbeats of agents with no unread message, then
// posts c.backlog messages to a channel they all joined, so that each has
// that many unread deliveries, and measures heartbeats again.
func (b *bench) backlogPhase(ctx context.Context, prefix string) error {
	c, agents := b.c, b.backlogAgents
	res := &backlogResult{}
	b.progress("backlog: heartbeats/s, %d agents with no unread message, %s", len(agents), c.duration)
	res.none = rate(ctx, b.hub, b.p, agents, c.duration, heartbeatOp, b.progress)
	b.progress("backlog: %.0f/s with none (%d errors, last %v)", res.none.perSec(), res.none.errs, res.none.lastErr)

	channel := "#" + prefix + "-backlog"
	if err := forEach(ctx, agents, 32, func(ctx context.Context, i int, a *agentRef) error {
		cctx, cancel := context.WithTimeout(a.authed(ctx), 10*time.Second)
		defer cancel()
		_, err := b.p.client(i).JoinChannel(cctx, &hubv1.JoinChannelRequest{Channel: channel})
		return err
	}); err != nil {
		return fmt.Errorf("join %s: %w", channel, err)
	}
	b.progress("backlog: posting %d messages to %s (%d members each get them all)", c.backlog, channel, len(agents))
	cpu := startCPU(b.hub)
	t0 := time.Now()
	if err := b.postMany(ctx, channel, c.backlog); err != nil {
		return err
	}
	res.build, res.buildLoad, res.posts = time.Since(t0).Seconds(), cpu.stop(b.hub), c.backlog

	// Every agent now has the backlog unread: check one, so the report
	// says what was measured.
	cctx, cancel := context.WithTimeout(agents[0].authed(ctx), 10*time.Second)
	st, err := b.p.client(0).GetStatus(cctx, &hubv1.GetStatusRequest{})
	cancel()
	if err != nil {
		return fmt.Errorf("status after the backlog: %w", err)
	}
	res.perAgent = int(st.GetStatus().GetUnreadCount())
	if res.perAgent < c.backlog {
		return fmt.Errorf("backlog: %s has %d unread messages after %d channel posts, want at least %d", agents[0].name, res.perAgent, c.backlog, c.backlog)
	}
	b.progress("backlog: %d unread per agent after %.1fs; heartbeats/s for %s", res.perAgent, res.build, c.duration)
	res.with = rate(ctx, b.hub, b.p, agents, c.duration, heartbeatOp, b.progress)
	b.progress("backlog: %.0f/s with the backlog (%d errors, last %v)", res.with.perSec(), res.with.errs, res.with.lastErr)
	b.res.backlog = res
	return ctx.Err()
}

// postMany posts n messages to channel as the wake sender, 32 at a time.
func (b *bench) postMany(ctx context.Context, channel string, n int) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	stop := ticker(2*time.Second, func() { b.progress("  %d/%d posted", min(int(next.Load()), n), n) })
	defer stop()
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				cctx, cancel := context.WithTimeout(b.sender.authed(ctx), 30*time.Second)
				_, err := b.p.client(w).PostMessage(cctx, &hubv1.PostMessageRequest{Channel: channel, Body: fmt.Sprintf("backlog %d", i)})
				cancel()
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("post to %s: %w", channel, err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
