package hub_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// BenchmarkAgentOverviews reads every agent's overview, as a dashboard's
// first read does (GET /v1/admin/agent-overviews, before the JSON), on
// SQLite with 2,000 and 10,000 agents.
func BenchmarkAgentOverviews(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "hub.db")
			if err := sqlite.SeedAgents(ctx, path, n, coreT0, coreT0.Add(time.Hour), nil); err != nil {
				b.Fatal(err)
			}
			db, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			cfg := hub.DefaultConfig()
			svc := newServices(b, db, hub.NewFakeClock(coreT0), cfg)
			b.ReportAllocs()
			for b.Loop() {
				os, err := svc.AgentOverviews(ctx, false)
				if err != nil || len(os) != n {
					b.Fatalf("%d overviews (%v), want %d", len(os), err, n)
				}
			}
		})
	}
}
