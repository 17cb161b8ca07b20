package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAuthenticateFleet authenticates the calls of a fleet: agents
// calling in turn, each every callEvery on the hub's clock (about what an
// agent of a 2,000-agent fleet does), with the header's check (KnownToken)
// before each full one as a gRPC call has. Reported beside ns/op and
// allocs/op: the share of calls that read the store (misses/call).
func BenchmarkAuthenticateFleet(b *testing.B) {
	const agents, callEvery = 500, 12 * time.Second
	h := newTestHub(b)
	ctx := context.Background()
	tokens := make([]string, agents)
	for i := range tokens {
		_, tokens[i] = h.agent(b, fmt.Sprintf("agent-%d", i))
	}
	for i := range agents { // a full turn: every agent called once before
		h.Clock.Advance(callEvery / agents)
		if _, err := h.Authenticate(ctx, tokens[i]); err != nil {
			b.Fatal(err)
		}
	}
	before := h.AuthCacheMisses()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h.Clock.Advance(callEvery / agents)
		token := tokens[i%agents]
		if ok, err := h.KnownToken(ctx, token); !ok || err != nil {
			b.Fatalf("KnownToken = %v, %v", ok, err)
		}
		if _, err := h.Authenticate(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.AuthCacheMisses()-before)/float64(b.N), "misses/call")
}
