package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// floorConfig is the command line of `hubbench floor`.
type floorConfig struct {
	bin                   string
	agents                int
	stream                float64 // share of the agents holding a stream
	carried, unary, posts float64 // per agent-minute
	channel               float64 // share of the posts to a channel
	members               int
	duration, warmup      time.Duration
	hubCPUs, benchCPUs    string
	progress              func(string, ...any)
	addr                  string
	frames, calls         atomic.Int64 // frames with messages, and replies
}

// runFloor is `hubbench floor`: the fleet's calls and frames, at its rates,
// against `hub bench-floor` — the hub's gRPC transport with handlers that
// do no work — pinned as the fleet pins the hub. What that process spends
// is what gRPC and the Go runtime alone cost at those rates: the floor
// under the hub's own figure in `hubbench fleet`. The default rates are
// the fleet's at 2,000 agents (hub_rpcs_total and hub_stream_calls_total
// per agent-minute): calls a stream carries, calls of their own besides
// posts, and posts, 30 % of them to a channel of 50 (a frame on 49 streams,
// each confirmed on its stream, as hub mcp confirms what it showed).
func runFloor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := &floorConfig{}
	fs := flag.NewFlagSet("hubbench floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "hub-bin", "", "hub binary that serves bench-floor (default: build ./cmd/hub)")
	fs.IntVar(&c.agents, "agents", 2000, "agents, each on a connection of its own")
	fs.Float64Var(&c.stream, "stream", 0.9, "share of the agents holding a stream of wake-ups")
	fs.Float64Var(&c.carried, "carried", 3.6, "calls a stream carries, per streaming agent-minute")
	fs.Float64Var(&c.unary, "calls", 2.3, "calls of their own besides posts, per agent-minute")
	fs.Float64Var(&c.posts, "posts", 0.75, "posts per agent-minute")
	fs.Float64Var(&c.channel, "channel", 0.3, "share of the posts to the poster's channel")
	fs.IntVar(&c.members, "channel-size", 50, "agents per channel")
	fs.DurationVar(&c.duration, "duration", 100*time.Second, "how long the calls run, warm-up included")
	fs.DurationVar(&c.warmup, "warmup", 20*time.Second, "how long before the measure starts")
	fs.StringVar(&c.hubCPUs, "hub-cpus", "auto", `run the server on these CPUs (taskset list); "auto": the last CPU when there are at least 2, "" for no pinning`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.agents < 1 || c.stream < 0 || c.stream > 1 || c.channel < 0 || c.channel > 1:
		return errors.New("--agents must be at least 1, --stream and --channel shares from 0 to 1")
	case c.carried < 0 || c.unary < 0 || c.posts < 0 || c.members < 2:
		return errors.New("the rates must not be negative, and a channel has at least 2 members")
	case c.warmup >= c.duration:
		return fmt.Errorf("--warmup %v must be shorter than --duration %v", c.warmup, c.duration)
	}
	if c.hubCPUs == "auto" {
		c.hubCPUs, c.benchCPUs = autoCPUs()
	}
	start := time.Now()
	c.progress = func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	if c.bin == "" {
		dir, err := os.MkdirTemp("", "hubbench-floor-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.progress("building ./cmd/hub")
		if c.bin, err = buildHub(ctx, dir); err != nil {
			return err
		}
	}
	return c.run(ctx, stdout)
}

func (c *floorConfig) run(ctx context.Context, stdout io.Writer) error {
	var err error
	if c.addr, err = freeAddr(); err != nil {
		return err
	}
	args := []string{"bench-floor", "--grpc-addr", c.addr, "--channel-members", strconv.Itoa(c.members)}
	cmd := exec.CommandContext(ctx, c.bin, args...)
	if c.hubCPUs != "" {
		cmd = exec.CommandContext(ctx, "taskset", append([]string{"-c", c.hubCPUs, c.bin}, args...)...)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s bench-floor: %w", c.bin, err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if c.benchCPUs != "" {
		if err := pinPID(os.Getpid(), c.benchCPUs); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.duration+2*time.Minute)
	defer cancel()

	c.progress("connecting %d agents (%.0f %% holding a stream)", c.agents, 100*c.stream)
	agents := make([]*floorAgent, c.agents)
	var streams []*floorAgent
	for i := range agents {
		a, err := c.connect(ctx, i, float64(i) < c.stream*float64(c.agents))
		if err != nil {
			return fmt.Errorf("agent %d: %w (is %s bench-floor serving? does the binary have it?)", i, err, c.bin)
		}
		defer a.conn.Close()
		agents[i] = a
		if a.stream != nil {
			streams = append(streams, a)
		}
	}
	rctx, stop := context.WithTimeout(ctx, c.duration)
	defer stop()
	var wg sync.WaitGroup
	// every starts what next draws, at perMinute per agent of n, drawn
	// from the exponential distribution (the fleet's agents are many and
	// independent).
	every := func(perMinute float64, n int, next func(*rand.Rand) func()) {
		rate := perMinute * float64(n) / 60
		if rate <= 0 {
			return
		}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
			for sleepUntil(rctx, time.Now().Add(time.Duration(rng.ExpFloat64()/rate*float64(time.Second)))) {
				wg.Go(next(rng))
			}
		})
	}
	if len(streams) > 0 {
		every(c.carried, len(streams), func(rng *rand.Rand) func() { return streams[rng.IntN(len(streams))].carry })
	}
	every(c.unary, c.agents, func(rng *rand.Rand) func() {
		a := agents[rng.IntN(len(agents))]
		return func() { a.heartbeat(rctx, c) }
	})
	every(c.posts, c.agents, func(rng *rand.Rand) func() {
		a, toChannel := agents[rng.IntN(len(agents))], rng.Float64() < c.channel
		return func() { a.post(rctx, c, toChannel) }
	})
	c.progress("the calls run for %v (the first %v warm up)", c.duration, c.warmup)
	if !sleepUntil(rctx, time.Now().Add(c.warmup)) {
		return ctx.Err()
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	cpu0, err := procCPU(pid)
	if err != nil {
		return err
	}
	t0, frames0, calls0 := time.Now(), c.frames.Load(), c.calls.Load()
	<-rctx.Done()
	cpu1, err := procCPU(pid)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	frames, calls := float64(c.frames.Load()-frames0)/el.Seconds(), float64(c.calls.Load()-calls0)/el.Seconds()
	cores := cpu1.Seconds() - cpu0.Seconds()
	wg.Wait()
	fmt.Fprintf(stdout, "| agents | calls/s | frames/s | server CPU, cores | µs per call or frame |\n|---|---|---|---|---|\n")
	fmt.Fprintf(stdout, "| %d | %.0f | %.0f | %.3f | %.0f |\n", c.agents, calls, frames, cores/el.Seconds(), 1e6*cores/(el.Seconds()*(frames+calls)))
	return nil
}

// floorAgent is one agent of the floor: a connection of its own, from its
// own loopback source address as the fleet's, and maybe a stream.
type floorAgent struct {
	conn   *grpc.ClientConn
	client hubv1.AgentServiceClient
	mu     sync.Mutex // one request at a time on the stream
	stream hubv1.AgentService_SubscribeClient
	ids    atomic.Uint64
}

func (c *floorConfig) connect(ctx context.Context, i int, stream bool) (*floorAgent, error) {
	conn, err := dialFrom(c.addr, sourceAddr(i, 100))
	if err != nil {
		return nil, err
	}
	a := &floorAgent{conn: conn, client: hubv1.NewAgentServiceClient(conn)}
	if !stream {
		_, err := a.client.Heartbeat(ctx, &hubv1.HeartbeatRequest{}, grpc.WaitForReady(true))
		return a, err
	}
	if a.stream, err = a.client.Subscribe(ctx, grpc.WaitForReady(true)); err != nil {
		return nil, err
	}
	if err := a.stream.Send(&hubv1.SubscribeRequest{Via: "channel"}); err != nil {
		return nil, err
	}
	if _, err := a.stream.Recv(); err != nil { // the first frame
		return nil, err
	}
	go a.read(c)
	return a, nil
}

// read takes the stream's frames: a frame's messages are confirmed on it.
func (a *floorAgent) read(c *floorConfig) {
	for {
		f, err := a.stream.Recv()
		if err != nil {
			return
		}
		if f.GetReply() != nil {
			c.calls.Add(1)
			continue
		}
		c.frames.Add(1)
		ids := make([]string, 0, len(f.GetMessages()))
		for _, m := range f.GetMessages() {
			ids = append(ids, m.GetId())
		}
		a.send(&hubv1.SubscribeRequest{ConfirmIds: ids})
	}
}

func (a *floorAgent) send(req *hubv1.SubscribeRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.stream.Send(req) // an ended stream ends read too
}

func (a *floorAgent) carry() {
	a.send(&hubv1.SubscribeRequest{Call: &hubv1.StreamCall{Id: a.ids.Add(1),
		Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}}})
}

func (a *floorAgent) heartbeat(ctx context.Context, c *floorConfig) {
	if _, err := a.client.Heartbeat(ctx, &hubv1.HeartbeatRequest{}); err == nil {
		c.calls.Add(1)
	}
}

func (a *floorAgent) post(ctx context.Context, c *floorConfig, toChannel bool) {
	req := &hubv1.PostMessageRequest{To: []string{"peer"}, Body: "progress note, see the diff in the branch when you can"}
	if toChannel {
		req = &hubv1.PostMessageRequest{Channel: "#crew", Body: req.Body}
	}
	if _, err := a.client.PostMessage(ctx, req); err == nil {
		c.calls.Add(1)
	}
}
