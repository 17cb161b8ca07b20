package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// fleetAgent is one simulated agent: a waiter that keeps a wait parked,
// and an actor that makes the agent's other calls at their rates.
type fleetAgent struct {
	i         int
	ref       *agentRef
	channel   string
	transport transport
	api       agentAPI
	// hooks is the gRPC client its hook calls go over: its own
	// connection for a gRPC agent, a shared one for the others.
	hooks func() (hubv1.AgentServiceClient, error)
	// bridge answers the hooks of an agent holding a stream, as hub mcp
	// does; nil for the others, whose hooks all go to the hub.
	bridge *bridgeHooks

	offlineAtStart bool
	cursor         atomic.Pointer[string] // the newest message the waiter saw
}

// createFleet creates the agents through the AdminService (createConc
// calls at a time, which the hub's writer commits in batches), has each
// join its channel, and gives each its transport.
func (f *fleet) createFleet(ctx context.Context) error {
	c := f.c
	prefix := runPrefix()
	t0 := time.Now()
	f.progress("creating %d agents and a probe through the AdminService, %d at a time", c.agents, c.createConc)
	refs, err := createAgents(ctx, f.admin, prefix, c.agents+1, c.createConc, f.progress)
	if err != nil {
		return err
	}
	f.probe, refs = refs[c.agents], refs[:c.agents]
	created := time.Since(t0)
	f.channels = (c.agents + c.rates.channelSize - 1) / c.rates.channelSize
	f.agents = make([]*fleetAgent, len(refs))
	for i, r := range refs {
		f.agents[i] = &fleetAgent{i: i, ref: r, channel: fmt.Sprintf("#crew-%04d", i/c.rates.channelSize)}
	}
	f.progress("joining %d channels of %d", f.channels, c.rates.channelSize)
	t1 := time.Now()
	if err := forEach(ctx, refs, c.createConc, func(ctx context.Context, i int, a *agentRef) error {
		cctx, cancel := context.WithTimeout(a.authed(ctx), 30*time.Second)
		defer cancel()
		_, err := f.admin.client(i).JoinChannel(cctx, &hubv1.JoinChannelRequest{Channel: f.agents[i].channel})
		return err
	}); err != nil {
		return fmt.Errorf("join channels: %w", err)
	}
	f.progress("fleet created: %d agents in %s (%.0f/s), channels joined in %s",
		c.agents, created.Round(time.Millisecond), float64(c.agents)/created.Seconds(), time.Since(t1).Round(time.Millisecond))

	// Transports: the first agents through hub mcp, then a share over
	// /mcp, a share over gRPC holding a stream, the rest over gRPC with
	// waits, each from its source address.
	nHTTP := int(float64(c.agents) * c.mcpHTTPShare)
	nStream := int(float64(c.agents) * c.streamShare)
	f.bridgeCtx, f.stopBridges = context.WithCancel(context.Background())
	for i, a := range f.agents {
		src := sourceAddr(i, c.perSource)
		shared := func() (hubv1.AgentServiceClient, error) { return f.admin.client(i), nil }
		switch {
		case i < c.stdio:
			s, err := startStdioMCP(f.bridgeCtx, f.hub.bin, f.hub.grpcAddr, a.ref.token, &f.bridges)
			if err != nil {
				return err
			}
			a.transport, a.api, a.hooks = transportStdio, &mcpAgent{rpc: s}, shared
		case i < c.stdio+nHTTP:
			h := newHTTPMCP(f.hub.httpAddr, a.ref.token, src)
			a.transport, a.api, a.hooks = transportHTTP, &mcpAgent{rpc: h, reset: h.reset}, shared
		default:
			g := &grpcAgent{addr: f.hub.grpcAddr, source: src, ref: a.ref}
			a.transport, a.api, a.hooks = transportGRPC, g, g.client
			if i < c.stdio+nHTTP+nStream {
				a.transport, a.bridge = transportStream, newBridgeHooks()
			}
		}
	}
	return nil
}

// live runs the agent until ctx ends: online spells with a parked wait
// and the periodic calls, offline spells with nothing at all.
func (a *fleetAgent) live(ctx context.Context, f *fleet) {
	r := f.c.rates
	rng := rand.New(rand.NewPCG(f.c.seed, uint64(a.i)+1))
	online := !a.offlineAtStart
	// An offline spell has mean offlineFor; online spells are as long as
	// makes the offline share r.offline.
	onlineMean := time.Duration(math.MaxInt64)
	if r.offline > 0 {
		onlineMean = time.Duration(float64(r.offlineFor) * (1 - r.offline) / r.offline)
	}
	var switchAt time.Time
	if online {
		switchAt = time.Now().Add(expDur(rng, onlineMean))
	} else {
		switchAt = time.Now().Add(expDur(rng, r.offlineFor))
	}
	for ctx.Err() == nil {
		if !online {
			if !sleepUntil(ctx, switchAt) {
				return
			}
			online, switchAt = true, time.Now().Add(expDur(rng, onlineMean))
			continue
		}
		if err := a.api.connect(ctx); err != nil {
			f.stats.call(opConnect, 0, err)
			if !sleepUntil(ctx, time.Now().Add(5*time.Second)) {
				return
			}
			continue
		}
		a.onlineSpell(ctx, f, rng, switchAt)
		a.api.close()
		online, switchAt = false, time.Now().Add(expDur(rng, r.offlineFor))
	}
}

// op is a kind of call the fleet makes (for the counts and errors).
type op int

const (
	opHeartbeat op = iota
	opActivity
	opCheckpoint
	opHook
	opPost
	opWait
	opDeepWork
	opMarkRead
	opConnect
	opProbe
	opDashboard
	opConfirm
	opExport
	opHookBridge // a hook the agent's bridge answered: no call
	opHookStream // a hook the agent's bridge answered with the injection it took on its stream
	opNotify     // a notification's hook run (the host waits for a person)
	opStop       // a stop's hook run (the end of a turn)
	opSessionEnd // a session end's hook run (the agent goes offline)
	nOps
)

var opNames = [nOps]string{"heartbeat", "activity log", "checkpoint", "hook", "post", "wait", "deep work", "mark read", "connect", "probe", "dashboard", "confirm", "OTLP export", "hook answered by the bridge", "hook answered by the bridge, injection on its stream", "notification", "stop", "session end"}

// onlineSpell keeps a wait parked and makes the periodic calls until
// until or ctx ends.
func (a *fleetAgent) onlineSpell(ctx context.Context, f *fleet, rng *rand.Rand, until time.Time) {
	r := f.c.rates
	run := ctx // a call the spell made ends even if the spell does meanwhile
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before wg.Wait: the waiter ends with the spell
	if a.transport == transportStream {
		wg.Go(func() { a.streamLoop(ctx, f) })
	} else {
		wg.Go(func() { a.waitLoop(ctx, f) })
	}

	const (
		evHeartbeat = iota
		evActivity
		evCheckpoint
		evHook
		evPost
		evNotify
		evStop
		evSessionEnd
		nEvents
	)
	period := [nEvents]time.Duration{r.heartbeat, r.activity, r.checkpoint, r.hook, r.post, r.notify, r.stop}
	next := [nEvents]time.Time{}
	now := time.Now()
	for e := range next { // a random phase: the fleet does not call in step
		next[e] = now.Add(time.Duration(rng.Float64() * float64(period[e])))
	}
	// The spell ends with the host's session, whose end the hook reports
	// while the stream is still open (the bridge ends with the host).
	next[evSessionEnd] = until.Add(-sessionEndLead)
	logs, deepWork, continuing := 0, false, false
	for {
		e := 0
		for i := range next {
			if next[i].Before(next[e]) {
				e = i
			}
		}
		if !sleepUntil(ctx, next[e]) {
			return
		}
		cctx, ccancel := context.WithTimeout(run, 30*time.Second)
		t0 := time.Now()
		switch e {
		case evHeartbeat:
			err := a.api.heartbeat(cctx)
			f.stats.call(opHeartbeat, time.Since(t0), err)
		case evCheckpoint:
			f.stats.call(opCheckpoint, 0, a.api.checkpoint(cctx, fmt.Sprintf("step %d of the task", logs)))
		case evHook:
			a.hook(cctx, f)
		case evNotify:
			a.notify(cctx, f)
		case evStop:
			held := a.stop(cctx, f, continuing)
			// A held stop shows the agent its messages: the host goes on,
			// and stops again a tool use later, continuing.
			continuing = held
			if held {
				next[e] = time.Now().Add(jitter(rng, r.hook, r.jitter))
				ccancel()
				continue
			}
		case evSessionEnd:
			a.endSession(cctx, f)
			ccancel()
			return
		case evPost:
			a.post(cctx, f, rng)
		case evActivity:
			// Read what came in, then log; a reflection every fourth log,
			// and always right after a deep work (the log that ends it is
			// its result; the next must reflect).
			if c := a.cursor.Load(); c != nil && *c != "" {
				f.stats.call(opMarkRead, 0, a.api.markRead(cctx, *c))
			}
			typ := [...]string{"thinking", "observation", "creation", "reflection"}[logs%4]
			if deepWork {
				typ, deepWork = "creation", false
				logs = 2 // the next is the reflection
			}
			err := a.api.activityLog(cctx, typ, fmt.Sprintf("%s %d", typ, logs))
			f.stats.call(opActivity, 0, err)
			logs++
			if err == nil && rng.Float64() < r.deepWork {
				mode, minutes := "flexible", 0
				if rng.IntN(2) == 0 {
					mode, minutes = "strict", 10+rng.IntN(21)
				}
				err := a.api.startDeepWork(cctx, mode, "a long refactor", minutes)
				f.stats.call(opDeepWork, 0, err)
				deepWork = err == nil
			}
		}
		ccancel()
		if e == evPost {
			next[e] = time.Now().Add(expDur(rng, period[e]))
		} else {
			next[e] = time.Now().Add(jitter(rng, period[e], r.jitter))
		}
	}
}

// post sends one message: to one other agent, to the agent's channel, or
// to the channel with a mention of another agent.
func (a *fleetAgent) post(ctx context.Context, f *fleet, rng *rand.Rand) {
	r := f.c.rates
	peer := f.agents[(a.i+1+rng.IntN(len(f.agents)-1))%len(f.agents)]
	var to []string
	channel, body := "", fmt.Sprintf("%s: progress note %d, see the diff in the branch when you can", a.ref.name, rng.IntN(1_000_000))
	switch x := rng.Float64(); {
	case x < r.direct:
		to = []string{peer.ref.name}
	case x < r.direct+r.channel:
		channel = a.channel
	default:
		channel, body = a.channel, "@"+peer.ref.name+" "+body
	}
	t0 := time.Now()
	id, err := a.api.post(ctx, to, channel, body)
	f.stats.call(opPost, time.Since(t0), err)
	if err == nil {
		f.stats.wakes.posted(id, t0, time.Now())
	}
}

// waitLoop keeps one wait parked until ctx ends; each reply's messages
// are matched with their posts (the post → wake latency).
func (a *fleetAgent) waitLoop(ctx context.Context, f *fleet) {
	cursor := ""
	if c := a.cursor.Load(); c != nil {
		cursor = *c
	}
	end, _ := ctx.Deadline() // the online spell's end
	for ctx.Err() == nil {
		// A wait with less than the hub's deadline margin left answers at
		// once, timed out: asked again and again it would spin until the
		// spell ends. An agent about to go offline waits no more.
		if !end.IsZero() && time.Until(end) < spellEndMargin {
			<-ctx.Done()
			return
		}
		issued := time.Now()
		cctx, cancel := context.WithTimeout(ctx, (waitSeconds+15)*time.Second)
		w, err := a.api.wait(cctx, cursor)
		at := time.Now()
		cancel()
		if ctx.Err() != nil {
			return
		}
		f.stats.call(opWait, 0, err)
		if err != nil {
			sleepUntil(ctx, time.Now().Add(time.Second))
			continue
		}
		if w.cursor != "" {
			cursor = w.cursor
			c := w.cursor
			a.cursor.Store(&c)
		}
		if len(w.ids) > 0 {
			f.stats.wakes.woke(w.ids, issued, at, a.transport)
		}
	}
}

// streamLoop keeps one stream of wake-ups open until ctx ends, opening it
// again from its cursor when it ends; each frame's messages are matched
// with their posts (the post → wake latency) and confirmed on the stream,
// as hub mcp confirms what it pushed.
func (a *fleetAgent) streamLoop(ctx context.Context, f *fleet) {
	g := a.api.(*grpcAgent)
	cursor := ""
	if c := a.cursor.Load(); c != nil {
		cursor = *c
	}
	// The stream ends with the spell: what fails within spellEndMargin
	// of its end is the spell ending, not an error.
	end, _ := ctx.Deadline()
	ending := func() bool { return ctx.Err() != nil || !end.IsZero() && time.Until(end) < spellEndMargin }
	for ctx.Err() == nil {
		issued := time.Now()
		err := g.subscribe(ctx, cursor, func(ids []string, c string, at time.Time, confirm func([]string) error) {
			shown := a.bridge.frame(len(ids))
			if c != "" {
				cursor = c
				a.cursor.Store(&c)
			}
			if len(ids) == 0 {
				return
			}
			f.stats.wakes.woke(ids, issued, at, a.transport)
			t0 := time.Now()
			err := confirm(ids)
			shown()
			if err == nil || !ending() {
				f.stats.call(opConfirm, time.Since(t0), err)
			}
		})
		a.bridge.ended()
		if ending() {
			<-ctx.Done()
			return
		}
		f.stats.call(opWait, 0, err)
		if err != nil {
			sleepUntil(ctx, time.Now().Add(time.Second))
		}
	}
}

// sessionEndLead is how long before the end of its online spell an agent's
// host ends its session: before spellEndMargin, while its stream is open.
const sessionEndLead = 2 * spellEndMargin

// spellEndMargin is how close to the end of its online spell an agent
// stops waiting: above the hub's deadline margin (500 ms), within which a
// wait does not park.
const spellEndMargin = time.Second

// jitter returns d varied uniformly by up to share either way.
func jitter(rng *rand.Rand, d time.Duration, share float64) time.Duration {
	return time.Duration(float64(d) * (1 + share*(2*rng.Float64()-1)))
}

// expDur draws from the exponential distribution of mean m.
func expDur(rng *rand.Rand, m time.Duration) time.Duration {
	if m == time.Duration(math.MaxInt64) {
		return m / 2
	}
	return time.Duration(rng.ExpFloat64() * float64(m))
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
