package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
)

// These benchmarks run the hub in the test process, over real loopback
// gRPC, so that `go test -bench` can profile it with the standard tools:
//
//	go test ./cmd/hubbench -run '^$' -bench HubPost -benchtime 10s -cpuprofile cpu.out
//	go tool pprof -top -focus 'sqlite.\(\*DB\).commit' cpu.out
//
// Client and hub share the process, so the figures are not the ones of
// BENCHMARKS.md (hubbench measures a separate hub process); the profile
// shows where the hub's time goes.

func benchHub(b *testing.B, senders int) (*pool, []*agentRef) {
	b.Helper()
	m := app.NewMain()
	m.DataDir = b.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.RateLimit.PerSecond = 0 // measure the hub, not the per-agent limiters
	m.ReadLimit.PerSecond = 0
	m.Config.WaitLimits.Total = senders + 100
	m.Logger = slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		b.Fatal(err)
	}
	// The hub takes at most 1,024 calls at once on one connection (more
	// queue at the client): parked waiters need a connection per few
	// hundred.
	p, err := dial(ctx, m.GRPCAddress(), tok, max(8, senders/500+1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.close)
	agents, err := createAgents(ctx, p, "prof", senders, 16, func(string, ...any) {})
	if err != nil {
		b.Fatal(err)
	}
	return p, agents
}

// BenchmarkHubPost posts direct messages from 32 concurrent senders.
func BenchmarkHubPost(b *testing.B) {
	p, agents := benchHub(b, 32)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) % len(agents)
		a, to := agents[i], agents[(i+1)%len(agents)].name
		c := p.client(i)
		ctx := a.authed(context.Background())
		for n := 0; pb.Next(); n++ {
			if _, err := c.PostMessage(ctx, &hubv1.PostMessageRequest{To: []string{to}, Body: fmt.Sprint("p ", n)}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHubHeartbeat calls Heartbeat from 32 concurrent agents.
func BenchmarkHubHeartbeat(b *testing.B) {
	p, agents := benchHub(b, 32)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) % len(agents)
		c := p.client(i)
		ctx := agents[i].authed(context.Background())
		for pb.Next() {
			if _, err := c.Heartbeat(ctx, &hubv1.HeartbeatRequest{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHubWaitReady calls WaitForMessages, one call after another, for
// an agent with a message waiting (left unread): each call answers at once.
// Reported besides ns/op: the process's CPU per call (cpu-µs/op, client
// and hub together).
//
//	go test ./cmd/hubbench -run '^$' -bench HubWaitReady -benchtime 5000x
func BenchmarkHubWaitReady(b *testing.B) {
	p, agents := benchHub(b, 2)
	c := p.client(0)
	to := agents[0]
	if _, err := c.PostMessage(agents[1].authed(context.Background()), &hubv1.PostMessageRequest{To: []string{to.name}, Body: "waiting"}); err != nil {
		b.Fatal(err)
	}
	ctx := to.authed(context.Background())
	timeout := int32(30)
	cpu0, err := procCPU("self")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		r, err := c.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: &timeout})
		if err != nil || len(r.GetMessages()) == 0 {
			b.Fatalf("WaitForMessages = %v, %v; want the message waiting", r, err)
		}
	}
	b.StopTimer()
	cpu1, err := procCPU("self")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

var heapProfile = flag.String("parked-heap-profile", "", "BenchmarkHubParkedWaiters: write a heap profile here while the waiters are parked")

// BenchmarkHubParkedWaiters parks b.N waiters (one per agent) and reports
// the process's live heap and goroutine stack growth per waiter; with
// -parked-heap-profile it writes a heap profile while they are parked
// (server-side allocations are those under grpc.(*Server)).
//
//	go test ./cmd/hubbench -run '^$' -bench HubParkedWaiters -benchtime 10000x -parked-heap-profile heap.out
func BenchmarkHubParkedWaiters(b *testing.B) {
	n := b.N
	p, agents := benchHub(b, n)
	ctx, cancel := context.WithCancel(context.Background())
	set := &waiterSet{p: p}
	b.Cleanup(func() { cancel(); set.unpark(0) })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	set.park(ctx, agents, n)
	if err := set.waitParked(ctx, "", n, 2*time.Minute, func(string, ...any) {}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	time.Sleep(time.Second)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/waiter")
	b.ReportMetric(float64(after.StackInuse-before.StackInuse)/float64(n), "stack-B/waiter")
	if *heapProfile != "" {
		f, err := os.Create(*heapProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
	}
}
