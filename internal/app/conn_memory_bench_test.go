package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The environment of a holder process (holdConnections): the hub's gRPC
// address, an agent token, how many connections to hold and whether each
// holds a stream of wake-ups.
const (
	holdAddrEnv   = "HUB_TEST_HOLD_ADDR"
	holdTokenEnv  = "HUB_TEST_HOLD_TOKEN"
	holdConnsEnv  = "HUB_TEST_HOLD_CONNS"
	holdStreamEnv = "HUB_TEST_HOLD_STREAM"
)

// TestMain runs the tests, or, in a process BenchmarkConnectionMemory
// started, holds its connections.
func TestMain(m *testing.M) {
	if os.Getenv(holdAddrEnv) != "" {
		if err := holdConnections(); err != nil {
			fmt.Fprintln(os.Stderr, "hold connections:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdConnections opens the connections its environment asks for, each a
// gRPC connection of its own that makes one call as the agent and, asked
// to, holds a watch stream past its first frame (as each agent's `hub mcp`
// does), prints "ready" and holds them until its stdin closes.
func holdConnections() error {
	n, err := strconv.Atoi(os.Getenv(holdConnsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", holdConnsEnv, err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+os.Getenv(holdTokenEnv))
	conns := make([]*grpc.ClientConn, n)
	deadline := time.Now().Add(time.Minute)
	for i := range conns {
		c, err := grpc.NewClient(os.Getenv(holdAddrEnv), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		client := hubv1.NewAgentServiceClient(c)
		err = holdCalls(ctx, client)
		for status.Code(err) == codes.ResourceExhausted && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // the agent's read rate, spent by the connections opened before
			err = holdCalls(ctx, client)
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns[i] = c
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
	return nil
}

// holdCalls makes a connection's call and, asked to, opens its watch
// stream and reads its first frame; the stream lasts as long as its
// connection.
func holdCalls(ctx context.Context, client hubv1.AgentServiceClient) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err := client.GetStatus(cctx, &hubv1.GetStatusRequest{})
	cancel()
	if err != nil || os.Getenv(holdStreamEnv) == "" {
		return err
	}
	st, err := client.Subscribe(ctx)
	if err == nil {
		err = st.Send(&hubv1.SubscribeRequest{Watch: true})
	}
	if err == nil {
		_, err = st.Recv()
	}
	return err
}

// benchConns is how many connections BenchmarkConnectionMemory holds.
const benchConns = 500

// BenchmarkConnectionMemory measures what the hub holds for each idle
// agent connection, with no stream ("idle") and holding a watch stream
// ("stream", as `hub mcp` does): benchConns gRPC connections from another
// process (so that the clients' memory is not counted), each past one
// call, against the hub's runtime before they opened: the heap in use, the
// goroutines' stacks and the goroutines, per connection, after a
// collection. Run it with -benchtime 1x (each iteration opens and measures
// the connections again).
func BenchmarkConnectionMemory(b *testing.B) {
	h := startCoreHub(b, "", oneAgentHolds(benchConns))
	token := h.newAgent(b, "holder")
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "idle", true: "stream"}[stream]
		b.Run(name, func(b *testing.B) {
			var use runtimeUse
			for range b.N {
				u := holdAndMeasure(b, h.m.GRPCAddress(), token, benchConns, stream)
				use.heap += u.heap
				use.stack += u.stack
				use.goroutines += u.goroutines
			}
			n := float64(b.N * benchConns)
			b.ReportMetric(float64(use.heap)/n, "heap-B/conn")
			b.ReportMetric(float64(use.stack)/n, "stack-B/conn")
			b.ReportMetric(float64(use.goroutines)/n, "goroutines/conn")
		})
	}
}

// A stream of wake-ups holds no goroutine of the hub besides the one
// gRPC runs its call on, which reads the stream's requests: its frames
// are sent by a goroutine a wake-up starts, which ends once it sent what
// was new. gRPC runs each call on a goroutine of its pool of stream
// workers (streamWorkers, 64), which this test's streams do not
// outnumber: what it counts over idle connections is what each stream
// holds besides.
func TestStreamHoldsNoGoroutineBesidesGRPCs(t *testing.T) {
	const conns = 50
	h := startCoreHub(t, "", oneAgentHolds(conns))
	token := h.newAgent(t, "holder")
	idle := holdAndMeasure(t, h.m.GRPCAddress(), token, conns, false)
	streaming := holdAndMeasure(t, h.m.GRPCAddress(), token, conns, true)
	if perStream := float64(streaming.goroutines-idle.goroutines) / conns; perStream > 0 {
		t.Fatalf("each stream holds %.2f goroutines of the hub besides gRPC's, want none", perStream)
	}
}

// oneAgentHolds lets one agent hold n streams (the holder's connections
// are all its).
func oneAgentHolds(n int) func(*hub.Config) {
	return func(c *hub.Config) { c.WaitLimits.PerAgent = n }
}

// holdAndMeasure has a holder process open conns connections to the hub
// at addr as token's agent, each holding a watch stream if stream, and
// returns what the hub's runtime holds more while they are open.
func holdAndMeasure(tb testing.TB, addr, token string, conns int, stream bool) runtimeUse {
	tb.Helper()
	before := runtimeNow()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), holdAddrEnv+"="+addr, holdTokenEnv+"="+token, holdConnsEnv+"="+strconv.Itoa(conns))
	if stream {
		cmd.Env = append(cmd.Env, holdStreamEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		tb.Fatalf("holder: %q, %v", line, err)
	}
	time.Sleep(time.Second) // the calls' goroutines end, the connections settle
	after := runtimeNow()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatal(err)
	}
	time.Sleep(time.Second) // the hub closes its side of the connections
	return runtimeUse{heap: after.heap - before.heap, stack: after.stack - before.stack, goroutines: after.goroutines - before.goroutines}
}

// runtimeUse is the memory and goroutines of this process's runtime.
type runtimeUse struct{ heap, stack, goroutines int64 }

// runtimeNow returns the runtime's use after two collections (the second
// frees what the first's cleanups left).
func runtimeNow() runtimeUse {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtimeUse{heap: int64(ms.HeapInuse), stack: int64(ms.StackInuse), goroutines: int64(runtime.NumGoroutine())}
}
