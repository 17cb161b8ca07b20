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
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// The environment of a holder process (holdConnections): the hub's gRPC
// address, an agent token and how many connections to hold.
const (
	holdAddrEnv  = "HUB_TEST_HOLD_ADDR"
	holdTokenEnv = "HUB_TEST_HOLD_TOKEN"
	holdConnsEnv = "HUB_TEST_HOLD_CONNS"
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
// gRPC connection of its own that makes one call as the agent (as each
// agent's `hub mcp` does), prints "ready" and holds them until its stdin
// closes.
func holdConnections() error {
	n, err := strconv.Atoi(os.Getenv(holdConnsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", holdConnsEnv, err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+os.Getenv(holdTokenEnv))
	conns := make([]*grpc.ClientConn, n)
	for i := range conns {
		c, err := grpc.NewClient(os.Getenv(holdAddrEnv), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = hubv1.NewAgentServiceClient(c).GetStatus(cctx, &hubv1.GetStatusRequest{})
		cancel()
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

// benchConns is how many connections BenchmarkConnectionMemory holds.
const benchConns = 500

// BenchmarkConnectionMemory measures what the hub holds for each idle
// agent connection: benchConns gRPC connections from another process (so
// that the clients' memory is not counted), each past one call, against
// the hub's runtime before they opened: the heap in use, the goroutines'
// stacks and the goroutines, per connection, after a collection. Run it
// with -benchtime 1x (each iteration opens and measures the connections
// again).
func BenchmarkConnectionMemory(b *testing.B) {
	h := startCoreHub(b, "", nil)
	token := h.newAgent(b, "holder")
	var heap, stack, goroutines float64
	for range b.N {
		before := runtimeNow()
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), holdAddrEnv+"="+h.m.GRPCAddress(), holdTokenEnv+"="+token, holdConnsEnv+"="+strconv.Itoa(benchConns))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "ready\n" {
			b.Fatalf("holder: %q, %v", line, err)
		}
		time.Sleep(time.Second) // the calls' goroutines end, the connections settle
		after := runtimeNow()
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		heap += float64(after.heap-before.heap) / benchConns
		stack += float64(after.stack-before.stack) / benchConns
		goroutines += float64(after.goroutines-before.goroutines) / benchConns
		time.Sleep(time.Second) // the hub closes its side of the connections
	}
	b.ReportMetric(heap/float64(b.N), "heap-B/conn")
	b.ReportMetric(stack/float64(b.N), "stack-B/conn")
	b.ReportMetric(goroutines/float64(b.N), "goroutines/conn")
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
