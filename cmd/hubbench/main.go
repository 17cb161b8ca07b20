// Command hubbench measures a real hub over loopback gRPC (SPEC §8): wake
// latency of parked WaitForMessages calls, acknowledged posts/s and
// heartbeats/s with the hub's CPU per call, heartbeats of agents with and
// without a backlog of unread messages, hub RSS per parked waiter, and the
// hub's idle cost with and without parked waiters — in the notifier design
// and, side by side, in the seed's polling design (hub --wait-mode poll).
// The tick scenario times the orchestrator's ticks of a hub serving a
// large store (seeded by the hidden `hub bench-seed`). --hub-cpus and
// --bench-cpus pin the hub and hubbench to separate CPUs (taskset).
//
// By default it builds ./cmd/hub, runs it as a child process on free
// 127.0.0.1 ports with a temporary data dir, and kills it at the end; --addr
// targets a hub that is already running instead. Progress goes to stderr,
// the results to stdout as a Markdown table.
//
//	go run ./cmd/hubbench            # the full run (a few minutes)
//	go run ./cmd/hubbench --quick    # small sizes, a smoke test
//	go run ./cmd/hubbench exposure   # what a client can take (exposure.go)
//	go run ./cmd/hubbench fleet      # a fleet of agents and dashboards (fleet.go)
//	go run ./cmd/hubbench soak       # the fleet for two hours, with a leak check
//	go run ./cmd/hubbench floor      # the fleet's calls and frames against gRPC alone (floor.go)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "hubbench:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	addr, dataDir, token string
	pid                  int
	hubBin               string

	scenarios     map[string]bool
	waiters       []int // wake-latency sizes
	memWaiters    int   // waiters parked for the memory and idle runs
	samples       int
	pollWaiters   int
	pollSamples   int
	pollInterval  time.Duration
	senders       int
	duration      time.Duration
	idle          time.Duration
	conns         int
	reparkGap     time.Duration
	settle        time.Duration
	createConc    int
	dbMetric      string
	maxTime       time.Duration
	quick         bool
	keepDataDir   bool
	strace        string
	hubEnv        []string
	nice          int
	straceWindow  time.Duration
	scenarioNames string

	backlog      int           // unread deliveries per agent in the backlog scenario
	tickAgents   int           // agents in the tick scenario's store
	tickDue      []int         // agents due in one tick, per tick case
	tickSamples  int           // ticks measured per case
	tickInterval time.Duration // the tick scenario's hub --tick-interval
	hubCPUs      string
	benchCPUs    string
	databaseURL  string // replicas.go: measure hubs on PostgreSQL
	replicas     int
}

var allScenarios = []string{"wake", "throughput", "backlog", "memory", "idle", "poll", "tick"}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("hubbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./cmd/hubbench [flags]\n\nMeasures a real hub over loopback gRPC; prints a Markdown table on stdout.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.addr, "addr", "", "gRPC address of a running hub to measure (default: build ./cmd/hub and run it as a child)")
	fs.StringVar(&c.dataDir, "data-dir", "", "with --addr: the hub's data dir, to read admin.token")
	fs.StringVar(&c.token, "token", "", "with --addr: the admin token (else read from --data-dir)")
	fs.IntVar(&c.pid, "pid", 0, "with --addr: the hub's process ID, for RSS and idle cost (else those are skipped)")
	fs.StringVar(&c.hubBin, "hub-bin", "", "a hub binary to run instead of building ./cmd/hub")
	fs.StringVar(&c.scenarioNames, "scenarios", strings.Join(allScenarios, ","), "comma-separated: "+strings.Join(allScenarios, ", "))
	sizes := fs.String("waiters", "1,1000,10000", "parked waiters for the wake-latency runs (comma-separated)")
	fs.IntVar(&c.memWaiters, "memory-waiters", 10000, "waiters parked for the memory and idle-cost runs")
	fs.IntVar(&c.samples, "samples", 2000, "wake-latency samples per size (notify mode)")
	fs.IntVar(&c.pollWaiters, "poll-waiters", 10000, "waiters parked in the poll-mode run")
	fs.IntVar(&c.pollSamples, "poll-samples", 50, "wake-latency samples in poll mode (each takes up to the poll interval)")
	fs.DurationVar(&c.pollInterval, "poll-interval", 0, "hub --poll-interval (0: the hub's default, 5s)")
	fs.IntVar(&c.senders, "senders", 32, "concurrent senders for posts/s and heartbeats/s")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each throughput run")
	fs.DurationVar(&c.idle, "idle", 20*time.Second, "length of each idle-cost window")
	fs.IntVar(&c.conns, "conns", 16, "gRPC connections the waiters share")
	fs.DurationVar(&c.reparkGap, "repark-gap", 5*time.Millisecond, "post to a waiter only once its wait has been re-issued this long ago")
	fs.DurationVar(&c.settle, "settle", 3*time.Second, "pause before reading RSS or starting an idle window")
	fs.IntVar(&c.createConc, "create-concurrency", 64, "concurrent CreateAgent calls")
	fs.StringVar(&c.dbMetric, "db-metric", "hub_store_queries_total", "Prometheus counter of SQLite queries at the hub's /metrics, reported if present")
	fs.DurationVar(&c.maxTime, "max-time", 30*time.Minute, "give up after this long")
	fs.BoolVar(&c.quick, "quick", false, "small sizes and short windows: a smoke test of well under a minute")
	fs.Func("hub-env", "KEY=VALUE added to the child hub's environment (repeatable; e.g. GOGC=50)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("%q: want KEY=VALUE", v)
		}
		c.hubEnv = append(c.hubEnv, v)
		return nil
	})
	fs.IntVar(&c.nice, "nice", -10, "run hubbench and the child hub at this nice value (needs root when negative; 0 leaves it): on a shared machine, other users' builds then take less CPU from the measurement")
	fs.BoolVar(&c.keepDataDir, "keep", false, "keep the temporary data dir (hub logs, database)")
	fs.StringVar(&c.strace, "strace", "auto", `count the hub's SQLite lock syscalls in each idle window with strace: "auto" (if installed), "on" or "off"`)
	fs.DurationVar(&c.straceWindow, "strace-window", 10*time.Second, "length of each strace window (after the idle window)")
	fs.IntVar(&c.backlog, "backlog", 10000, "backlog scenario: unread deliveries built up per agent before heartbeats are measured again")
	fs.IntVar(&c.tickAgents, "tick-agents", 100000, "tick scenario: agents in the store")
	due := fs.String("tick-due", "0,1000,10000", "tick scenario: agents due in one tick, per case (comma-separated)")
	fs.IntVar(&c.tickSamples, "tick-samples", 5, "tick scenario: ticks measured per case")
	fs.DurationVar(&c.tickInterval, "tick-interval", 15*time.Second, "tick scenario: the hub's tick interval (room for a group's calls before its tick)")
	fs.StringVar(&c.hubCPUs, "hub-cpus", "", "run the child hub on these CPUs (taskset list, e.g. 1 or 2-7)")
	fs.StringVar(&c.benchCPUs, "bench-cpus", "", "run hubbench itself on these CPUs (taskset list, e.g. 0)")
	fs.StringVar(&c.databaseURL, "database-url", "", "measure hubs on this PostgreSQL database (it must be empty or a hub's own) instead of SQLite: posts/s and heartbeats/s on 1 to --replicas replicas, wake latency across replicas, idle cost")
	fs.IntVar(&c.replicas, "replicas", 2, "with --database-url: measure on 1, then up to this many replicas")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: hubbench takes flags only", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick {
		// Explicit flags win over the quick defaults.
		def := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		def("waiters", func() { *sizes = "1,50" })
		def("memory-waiters", func() { c.memWaiters = 200 })
		def("samples", func() { c.samples = 50 })
		def("poll-waiters", func() { c.pollWaiters = 200 })
		def("poll-samples", func() { c.pollSamples = 5 })
		def("poll-interval", func() { c.pollInterval = time.Second })
		def("duration", func() { c.duration = time.Second })
		def("idle", func() { c.idle = 2 * time.Second })
		def("strace-window", func() { c.straceWindow = 2 * time.Second })
		def("settle", func() { c.settle = 500 * time.Millisecond })
		def("conns", func() { c.conns = 4 })
		def("senders", func() { c.senders = 8 })
		def("backlog", func() { c.backlog = 200 })
		def("tick-agents", func() { c.tickAgents = 2000 })
		def("tick-due", func() { *due = "0,100,500" })
		def("tick-samples", func() { c.tickSamples = 2 })
		def("tick-interval", func() { c.tickInterval = 3 * time.Second })
	}
	c.scenarios = map[string]bool{}
	for _, s := range strings.Split(c.scenarioNames, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(allScenarios, s) {
			return nil, fmt.Errorf("--scenarios: unknown %q; choose from %s", s, strings.Join(allScenarios, ", "))
		}
		c.scenarios[s] = true
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--waiters: %q is not a positive number (give e.g. 1,1000,10000)", s)
		}
		c.waiters = append(c.waiters, n)
	}
	slices.Sort(c.waiters)
	c.waiters = slices.Compact(c.waiters)
	for _, s := range strings.Split(*due, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > c.tickAgents {
			return nil, fmt.Errorf("--tick-due: %q is not a number of agents between 0 and --tick-agents (%d)", s, c.tickAgents)
		}
		c.tickDue = append(c.tickDue, n)
	}
	if sum := func() (n int) {
		for _, d := range c.tickDue {
			n += d * c.tickSamples
		}
		return n
	}(); c.scenarios["tick"] && sum > c.tickAgents {
		return nil, fmt.Errorf("--tick-due × --tick-samples makes %d agents due, more than --tick-agents (%d): each is due once", sum, c.tickAgents)
	}
	switch {
	case c.memWaiters < 1 || c.pollWaiters < 1:
		return nil, errors.New("--memory-waiters and --poll-waiters must be at least 1")
	case c.samples < 1 || c.pollSamples < 1:
		return nil, errors.New("--samples and --poll-samples must be at least 1")
	case c.senders < 1 || c.conns < 1 || c.createConc < 1:
		return nil, errors.New("--senders, --conns and --create-concurrency must be at least 1")
	case c.backlog < 1 || c.tickAgents < 1 || c.tickSamples < 1:
		return nil, errors.New("--backlog, --tick-agents and --tick-samples must be at least 1")
	case c.tickInterval < time.Second:
		return nil, errors.New("--tick-interval must be at least 1s")
	case c.duration <= 0 || c.idle <= 0 || c.straceWindow <= 0:
		return nil, errors.New("--duration, --idle and --strace-window must be positive")
	case c.replicas < 1:
		return nil, errors.New("--replicas must be at least 1")
	case c.strace != "auto" && c.strace != "on" && c.strace != "off":
		return nil, fmt.Errorf(`--strace %q: use "auto", "on" or "off"`, c.strace)
	}
	if c.addr != "" {
		if c.token == "" && c.dataDir == "" {
			return nil, errors.New("--addr needs the admin token: give --token, or --data-dir where admin.token is")
		}
		if c.token == "" {
			b, err := os.ReadFile(filepath.Join(c.dataDir, "admin.token"))
			if err != nil {
				return nil, fmt.Errorf("read the admin token: %w", err)
			}
			c.token = strings.TrimSpace(string(b))
		}
		if c.scenarios["poll"] {
			delete(c.scenarios, "poll") // needs a hub started in poll mode
		}
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "exposure" {
		return runExposure(ctx, args[1:], stdout, stderr) // exposure.go
	}
	if len(args) > 0 && args[0] == "floor" {
		return runFloor(ctx, args[1:], stdout, stderr) // floor.go
	}
	if len(args) > 0 && (args[0] == "fleet" || args[0] == "soak") {
		return runFleet(ctx, args[0], args[1:], stdout, stderr) // fleet.go
	}
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.maxTime)
	defer cancel()
	start := time.Now()
	progress := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	b := &bench{c: c, progress: progress, res: &results{}}
	if c.nice != 0 {
		if err := reniceSelf(c.nice); err != nil {
			progress("cannot run at nice %d (%v): measuring at the default priority", c.nice, err)
			c.nice = 0
		}
	}
	b.res.nice = c.nice
	if c.benchCPUs != "" {
		if err := pinPID(os.Getpid(), c.benchCPUs); err != nil {
			return err
		}
		b.res.benchCPUs = c.benchCPUs
	}
	b.res.hubCPUs = c.hubCPUs
	if c.databaseURL != "" {
		return runReplicas(ctx, c, progress, stdout)
	}
	defer b.cleanup()
	if err := b.run(ctx); err != nil {
		return err
	}
	b.res.write(stdout, c)
	progress("done in %s", time.Since(start).Round(time.Second))
	return nil
}
