package mcpbridge_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
)

// BenchmarkChannelPushOverStdio measures post → channel notification: a
// real `hub mcp` process (channels on, as by default) for one agent, its
// stdout read by a go-sdk client; another agent posts over gRPC and the
// clock stops when the notification carrying that message is decoded.
// Reports p50 and p99 in milliseconds.
//
//	go test -run '^$' -bench ChannelPush -benchtime 500x ./internal/mcpbridge/
func BenchmarkChannelPushOverStdio(b *testing.B) {
	// Rate limits off, as in hubbench: posts follow each other at once, and
	// bob's push loop re-parks after each (over 200 reads/s, the default
	// read limit, past which it would back off 100 ms and batch).
	h := startHub(b, func(m *app.Main) { m.RateLimit.PerSecond, m.ReadLimit.PerSecond = 0, 0 })
	alice := newPoster(b, h.GRPCAddress(), h.createAgent(b, "alice"))
	cmd := exec.Command(buildHub(b), "mcp")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+h.GRPCAddress(), "HUB_TOKEN="+h.createAgent(b, "bob"))
	cmd.Stderr = os.Stderr
	ch := newCatcher(&mcp.CommandTransport{Command: cmd})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ch, legacyHandshake)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	eventuallyTrue(b, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(b) == 1 })

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		id := alice.post(b, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "ping"})
		for {
			e := ch.next(b)
			if slices.Contains(e.ids(), id) {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
