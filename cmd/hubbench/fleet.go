package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/usage/replay"
)

// `hubbench fleet` runs a fleet of simulated agents and dashboards against
// one hub for a while, as a deployment would: every agent parks a wait
// (over gRPC, over MCP at /mcp, or through a `hub mcp` stdio bridge),
// heartbeats, logs activity and checkpoints, asks for hook injections
// (those of an agent holding a stream answered by its bridge when nothing
// is new, as hub mcp answers them), reports its host's notifications,
// stops and session ends (fleet_hooks.go),
// posts to peers and channels, declares deep work now and then and goes
// offline and back; every dashboard holds the admin stream and does what
// the page does with each event. It prints the hub's figures each
// --report-every and at the end (fleet_report.go).
//
//	go run ./cmd/hubbench fleet --agents 10000 --dashboards 20 --duration 15m
//	go run ./cmd/hubbench soak                 # 1,000 agents for 2 h, with a leak check
//
// Files: fleet.go (flags, the run), fleet_agent.go (an agent's life),
// fleet_hooks.go (its hooks, through its bridge or alone),
// fleet_api.go (the agent API over gRPC), fleet_mcp.go (the same over MCP),
// fleet_dash.go (dashboards), fleet_stats.go (figures), fleet_report.go
// (per-interval lines, the end table, the JSON).

// defaultStreamShare is the share of the agents that hold a stream by
// default: the agents over gRPC model hub mcp, which holds one; the rest
// of them park WaitForMessages, which stays for every other caller.
const defaultStreamShare = 0.9

// fleetConfig is the parsed command line of `hubbench fleet`.
type fleetConfig struct {
	agents, dashboards int
	duration, warmup   time.Duration
	reportEvery        time.Duration
	maxTime            time.Duration
	hubBin             string
	databaseURL        string
	jsonPath           string
	hubCPUs, benchCPUs string
	hubArgs, hubEnv    []string
	nice               int
	keep               bool
	seed               uint64

	rates        fleetRates
	mcpHTTPShare float64 // agents over MCP at /mcp
	streamShare  float64 // agents over gRPC holding a stream
	stdio        int     // agents over their own `hub mcp` process
	perSource    int     // agents per loopback source address
	createConc   int
	probeEvery   time.Duration
	otlpEvery    time.Duration // each agent's host exports its telemetry (fleet_otlp.go); 0: none

	// Budgets (0: none): the run fails past them (the CI-sized run).
	maxRSSPerAgentKiB    float64
	maxCPUPerAgentMinute time.Duration
	// soak: check that RSS, goroutines and open files stay flat after the
	// warm-up (within leakTolerance) and report the store's growth.
	soak          bool
	leakTolerance float64
}

// fleetRates is how often an agent does each thing, on average.
type fleetRates struct {
	heartbeat, activity, checkpoint, hook, post time.Duration
	notify, stop                                time.Duration // events of the host, each a hook run
	jitter                                      float64       // ± share of each fixed interval
	direct, channel                             float64       // shares of posts; mentions take the rest
	channelSize                                 int
	deepWork                                    float64 // share of activity logs followed by a deep work declaration
	offline                                     float64 // share of agents offline at any time
	offlineFor                                  time.Duration
}

func parseFleetFlags(name string, args []string, stderr io.Writer) (*fleetConfig, error) {
	c := &fleetConfig{}
	soak := name == "soak"
	fs := flag.NewFlagSet("hubbench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./cmd/hubbench %s [flags]\n\n", name)
		if soak {
			fmt.Fprint(stderr, "The fleet at 1,000 agents for 2 hours with a leak check: the hub's RSS, goroutines and open\nfiles must stay flat after the warm-up, and the store's growth per hour is reported.\n\n")
		} else {
			fmt.Fprint(stderr, "A fleet of simulated agents and dashboards against one hub; prints the hub's figures\neach --report-every and at the end.\n\n")
		}
		fmt.Fprint(stderr, "Flags:\n")
		fs.PrintDefaults()
	}
	agents, dashboards, duration, warmup := 1000, 5, 5*time.Minute, time.Minute
	if soak {
		duration, warmup = 2*time.Hour, 10*time.Minute
	}
	fs.IntVar(&c.agents, "agents", agents, "simulated agents")
	fs.IntVar(&c.dashboards, "dashboards", dashboards, "simulated dashboards holding the admin stream")
	fs.DurationVar(&c.duration, "duration", duration, "length of the run after the agents are created")
	fs.DurationVar(&c.warmup, "warmup", warmup, "first part of the run left out of the end figures")
	fs.DurationVar(&c.reportEvery, "report-every", time.Minute, "period of the progress lines")
	fs.DurationVar(&c.maxTime, "max-time", 0, "give up after this long (default: the duration plus 30 minutes)")
	fs.StringVar(&c.hubBin, "hub-bin", "", "a hub binary to run instead of building ./cmd/hub")
	fs.StringVar(&c.databaseURL, "database-url", "", "run the hub on this PostgreSQL database (empty or a hub's own) instead of SQLite")
	fs.StringVar(&c.jsonPath, "json", "", "write the end figures to this file as one JSON object")
	fs.StringVar(&c.hubCPUs, "hub-cpus", "auto", `run the hub on these CPUs (taskset list); "auto": the last CPU when there are at least 2, "" for no pinning`)
	fs.StringVar(&c.benchCPUs, "bench-cpus", "auto", `run hubbench (and its hub mcp bridges) on these CPUs; "auto": all but the hub's`)
	fs.Func("hub-arg", "an extra flag for hub serve (repeatable; e.g. --hub-arg=--retain-messages=1h)", func(v string) error {
		c.hubArgs = append(c.hubArgs, v)
		return nil
	})
	fs.Func("hub-env", "KEY=VALUE added to the hub's environment (repeatable)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("%q: want KEY=VALUE", v)
		}
		c.hubEnv = append(c.hubEnv, v)
		return nil
	})
	fs.IntVar(&c.nice, "nice", -10, "run hubbench and the hub at this nice value (needs root when negative; 0 leaves it)")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary data dir (hub log, database)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the agents' random choices")
	r := &c.rates
	fs.DurationVar(&r.heartbeat, "heartbeat", 30*time.Second, "an agent's heartbeat period")
	fs.DurationVar(&r.activity, "activity", 2*time.Minute, "an agent's activity-log period")
	fs.DurationVar(&r.checkpoint, "checkpoint", 10*time.Minute, "an agent's checkpoint period")
	fs.DurationVar(&r.hook, "hook", 20*time.Second, "period of an agent's tool uses, each a hook run: a hook injection call (TakeInjection), unless the agent holds a stream and its bridge answers that nothing is new, as hub mcp does")
	fs.DurationVar(&r.notify, "notify", 15*time.Minute, "period of an agent's notifications (the host waits for a person: a permission or idle prompt), each a hook run noting it (NoteHostEvent needs_input): on the agent's stream when it holds one, as hub mcp makes it, else alone, as hub hook does")
	fs.DurationVar(&r.stop, "stop", 5*time.Minute, "period of an agent's stops (the end of a turn), each a hook run: CheckStop, then the note that the turn ended when the hub lets it go, or the messages it holds the stop for confirmed and another stop a tool use later; on the stream or alone as --notify")
	fs.DurationVar(&r.post, "post", 2*time.Minute, "mean time between an agent's posts (exponential)")
	fs.Float64Var(&r.jitter, "jitter", 0.2, "each fixed period varies by up to this share either way")
	fs.Float64Var(&r.direct, "direct", 0.70, "share of posts sent to one other agent")
	fs.Float64Var(&r.channel, "channel", 0.25, "share of posts sent to the agent's channel; the rest mention an agent in it")
	fs.IntVar(&r.channelSize, "channel-size", 50, "agents per channel")
	fs.Float64Var(&r.deepWork, "deep-work", 0.1, "share of activity logs followed by a deep work declaration")
	fs.Float64Var(&r.offline, "offline", 0.05, "share of agents offline at any time (each goes offline and comes back; its host's session ends first, a hook run: NoteHostEvent session_end and EndSession, on the stream or alone as --notify)")
	fs.DurationVar(&r.offlineFor, "offline-for", 10*time.Minute, "mean length of an offline spell (exponential)")
	fs.Float64Var(&c.mcpHTTPShare, "mcp-http", 0.05, "share of agents speaking MCP over HTTP (/mcp)")
	fs.Float64Var(&c.streamShare, "stream", defaultStreamShare, "share of agents over gRPC holding one Subscribe stream (via channel, confirming each frame, their hooks answered by their bridge when nothing is new, as hub mcp does) instead of parking WaitForMessages; by default what fits beside --mcp-http and --mcp-stdio up to 0.9")
	fs.IntVar(&c.stdio, "mcp-stdio", -1, "agents speaking MCP through a `hub mcp` process each (default: 0.5 % of the agents, at most 50)")
	fs.IntVar(&c.perSource, "per-source", 200, "agents per loopback source address (127.1.x.y): the hub limits connections per address")
	fs.IntVar(&c.createConc, "create-concurrency", 64, "concurrent CreateAgent and JoinChannel calls while the fleet is set up")
	fs.DurationVar(&c.probeEvery, "probe-every", 2*time.Second, "period of the dashboard probe (a post whose unread count every dashboard watches)")
	fs.DurationVar(&c.otlpEvery, "otlp-every", 0, "each agent's host posts an OTLP export of metrics and one of events (the recorded Claude Code session) this often (0: no exporters)")
	fs.Float64Var(&c.maxRSSPerAgentKiB, "max-rss-per-agent", 0, "fail if the hub's peak RSS per agent passes this many KiB (0: no check)")
	fs.DurationVar(&c.maxCPUPerAgentMinute, "max-cpu-per-agent-minute", 0, "fail if the hub's CPU per agent-minute passes this (0: no check)")
	fs.BoolVar(&c.soak, "leak-check", soak, "fail if RSS, goroutines or open files grow past --leak-tolerance after the warm-up")
	fs.Float64Var(&c.leakTolerance, "leak-tolerance", 0.05, "largest growth after the warm-up the leak check allows")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: hubbench %s takes flags only", fs.Args(), name)
	}
	if c.stdio < 0 {
		c.stdio = min(50, c.agents/200)
	}
	if c.maxTime == 0 {
		c.maxTime = c.duration + 30*time.Minute
	}
	streamSet := false
	fs.Visit(func(f *flag.Flag) { streamSet = streamSet || f.Name == "stream" })
	if fits := float64(c.agents-c.stdio)/float64(max(c.agents, 1)) - c.mcpHTTPShare; !streamSet && c.streamShare > fits {
		c.streamShare = max(0, fits) // the default: what fits beside the MCP agents
	}
	switch {
	case c.agents < 2 || c.agents > 100_000:
		return nil, fmt.Errorf("--agents %d: give 2 to 100,000", c.agents)
	case c.dashboards < 0 || c.dashboards > 60:
		return nil, fmt.Errorf("--dashboards %d: give 0 to 60 (the hub streams to 64 pages at most)", c.dashboards)
	case c.duration <= 0 || c.warmup < 0 || c.warmup >= c.duration:
		return nil, errors.New("--duration must be positive and --warmup shorter than it")
	case c.reportEvery < time.Second:
		return nil, errors.New("--report-every must be at least 1s")
	case r.heartbeat <= 0 || r.activity <= 0 || r.checkpoint <= 0 || r.hook <= 0 || r.post <= 0 || r.notify <= 0 || r.stop <= 0 || r.offlineFor <= 0:
		return nil, errors.New("every period (--heartbeat, --activity, --checkpoint, --hook, --notify, --stop, --post, --offline-for) must be positive")
	case r.jitter < 0 || r.jitter >= 1:
		return nil, errors.New("--jitter must be in [0, 1)")
	case r.direct < 0 || r.channel < 0 || r.direct+r.channel > 1:
		return nil, errors.New("--direct and --channel are shares: each ≥ 0, together ≤ 1")
	case r.channelSize < 2:
		return nil, errors.New("--channel-size must be at least 2")
	case r.deepWork < 0 || r.deepWork > 1 || r.offline < 0 || r.offline >= 1 || c.mcpHTTPShare < 0 || c.mcpHTTPShare > 1:
		return nil, errors.New("--deep-work, --offline and --mcp-http are shares in [0, 1] (--offline below 1)")
	case c.stdio > c.agents-int(float64(c.agents)*c.mcpHTTPShare):
		return nil, errors.New("--mcp-stdio agents do not fit beside the --mcp-http share")
	case c.streamShare < 0 || c.streamShare > 1 || c.stdio+int(float64(c.agents)*(c.mcpHTTPShare+c.streamShare)) > c.agents:
		return nil, errors.New("--stream is a share in [0, 1] and must fit beside --mcp-http and --mcp-stdio")
	case c.perSource < 1 || c.createConc < 1 || c.probeEvery <= 0:
		return nil, errors.New("--per-source and --create-concurrency must be at least 1, --probe-every positive")
	case c.otlpEvery < 0 || c.otlpEvery > 0 && c.otlpEvery < time.Second:
		return nil, errors.New("--otlp-every must be 0 (no exporters) or at least 1s")
	case c.leakTolerance <= 0:
		return nil, errors.New("--leak-tolerance must be positive")
	}
	if c.hubCPUs == "auto" || c.benchCPUs == "auto" {
		hub, bench := autoCPUs()
		if c.hubCPUs == "auto" {
			c.hubCPUs = hub
		}
		if c.benchCPUs == "auto" {
			c.benchCPUs = bench
		}
	}
	return c, nil
}

// autoCPUs pins the hub to the last CPU and hubbench to the others, when
// there are at least two CPUs and taskset is there.
func autoCPUs() (hub, bench string) {
	n := runtime.NumCPU()
	if n < 2 || !haveTaskset() {
		return "", ""
	}
	if n == 2 {
		return "1", "0"
	}
	return strconv.Itoa(n - 1), "0-" + strconv.Itoa(n-2)
}

// fleet is one run of `hubbench fleet`.
type fleet struct {
	c        *fleetConfig
	progress func(string, ...any)
	tmp      string
	hub      *hubProc
	admin    *pool // a few connections for the admin calls and the hooks of MCP agents

	agents   []*fleetAgent
	probe    *agentRef
	channels int
	stats    *fleetStats
	otlp     *replay.Session // what the exporters send (--otlp-every)

	bridges     sync.WaitGroup // hub mcp processes
	bridgeCtx   context.Context
	stopBridges context.CancelFunc // ends them
}

func runFleet(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	c, err := parseFleetFlags(name, args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.maxTime)
	defer cancel()
	start := time.Now()
	f := &fleet{c: c, progress: func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%7.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}}
	if c.nice != 0 {
		if err := reniceSelf(c.nice); err != nil {
			f.progress("cannot run at nice %d (%v): measuring at the default priority", c.nice, err)
			c.nice = 0
		}
	}
	if c.benchCPUs != "" {
		if err := pinPID(os.Getpid(), c.benchCPUs); err != nil {
			return err
		}
	}
	defer f.cleanup()
	if err := f.setUp(ctx); err != nil {
		return err
	}
	res, err := f.run(ctx)
	if err != nil {
		return err
	}
	res.write(stdout)
	if c.jsonPath != "" {
		if err := res.writeJSON(c.jsonPath); err != nil {
			return err
		}
	}
	f.progress("done in %s", time.Since(start).Round(time.Second))
	return res.check()
}

func (f *fleet) cleanup() {
	if f.admin != nil {
		f.admin.close()
	}
	if f.stopBridges != nil {
		f.stopBridges()
	}
	f.bridges.Wait()
	if f.hub != nil {
		f.hub.stop()
	}
	if f.tmp != "" {
		if f.c.keep {
			f.progress("kept %s", f.tmp)
		} else {
			os.RemoveAll(f.tmp)
		}
	}
}

// setUp starts the hub and creates the fleet's agents and channels.
func (f *fleet) setUp(ctx context.Context) error {
	c := f.c
	var err error
	if f.tmp, err = os.MkdirTemp("", "hubbench-fleet-"); err != nil {
		return err
	}
	if c.otlpEvery > 0 {
		if f.otlp, err = loadOTLPSession(); err != nil {
			return err
		}
	}
	bin := c.hubBin
	if bin == "" {
		f.progress("building ./cmd/hub")
		if bin, err = buildHub(ctx, f.tmp); err != nil {
			return err
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	// The limits are an operator's settings for a fleet this size: every
	// agent holds a connection or two and a parked wait.
	args := []string{"--max-conns", strconv.Itoa(3*c.agents + 1000), "--max-waiters", strconv.Itoa(2*c.agents + 100)}
	if c.databaseURL != "" {
		args = append(args, "--database-url", c.databaseURL)
	}
	args = append(args, c.hubArgs...)
	f.progress("starting the hub: %s serve %s %s", bin, strings.Join(args, " "), strings.Join(c.hubEnv, " "))
	if f.hub, err = startHub(ctx, bin, filepath.Join(f.tmp, "data"), c.hubEnv, c.hubCPUs, args...); err != nil {
		return err
	}
	f.hub.bin = bin
	if f.admin, err = dial(ctx, f.hub.grpcAddr, f.hub.token, 8); err != nil {
		return err
	}
	return f.createFleet(ctx)
}

// run lives the fleet for the duration and returns the figures.
func (f *fleet) run(ctx context.Context) (*fleetResult, error) {
	c := f.c
	f.stats = newFleetStats(f, time.Now())
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	f.progress("starting %d dashboards and %d agents (%d over gRPC, %d of them holding a stream, %d over MCP at /mcp, %d through hub mcp)",
		c.dashboards, len(f.agents), f.count(transportGRPC)+f.count(transportStream), f.count(transportStream), f.count(transportHTTP), f.count(transportStdio))
	for i := range c.dashboards {
		d := newDashSim(f, i)
		wg.Go(func() { d.run(runCtx) })
	}
	wg.Go(func() { f.runProbe(runCtx) })
	rng := rand.New(rand.NewPCG(c.seed, 0))
	for _, a := range f.agents {
		a.offlineAtStart = rng.Float64() < c.rates.offline
		wg.Go(func() { a.live(runCtx, f) })
	}
	if c.otlpEvery > 0 {
		f.progress("each agent exports its telemetry every %s", c.otlpEvery)
		clients := otlpClients{}
		for _, a := range f.agents {
			client := clients.get(sourceAddr(a.i, c.perSource))
			wg.Go(func() { a.exportLoop(runCtx, f, client) })
		}
	}
	err := f.stats.sample(runCtx, c.duration)
	stop()
	f.progress("stopping the fleet")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		f.progress("some agents did not stop within a minute; reporting anyway")
	}
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the run passed --max-time: %w", ctx.Err())
	}
	return f.stats.result(), nil
}

func (f *fleet) count(t transport) int {
	n := 0
	for _, a := range f.agents {
		if a.transport == t {
			n++
		}
	}
	return n
}

// runProbe posts to the probe agent every probeEvery as the admin; each
// dashboard times how long it takes the probe's unread count to reach the
// count of posts acknowledged (fleet_dash.go). The probe keeps itself
// active with a checkpoint a minute, so that it is never nudged (a nudge
// would count as unread too).
func (f *fleet) runProbe(ctx context.Context) {
	t := time.NewTicker(f.c.probeEvery)
	defer t.Stop()
	lastCheckpoint := time.Time{}
	for n := int64(1); ; {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(lastCheckpoint) > time.Minute {
			cctx, cancel := context.WithTimeout(f.probe.authed(ctx), 10*time.Second)
			_, err := f.admin.client(0).Checkpoint(cctx, checkpointReq("watching the dashboards"))
			cancel()
			f.stats.call(opCheckpoint, 0, err)
			lastCheckpoint = time.Now()
		}
		cctx, cancel := context.WithTimeout(f.admin.adminCtx(ctx), 10*time.Second)
		_, err := f.admin.client(0).PostMessage(cctx, adminPostReq(f.probe.name, fmt.Sprintf("probe %d", n)))
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				f.stats.call(opProbe, 0, err)
			}
			continue
		}
		f.stats.probe.posted(n, time.Now())
		n++
	}
}
