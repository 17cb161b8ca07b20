package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkCreateActivityLog is an agent filing an activity log, as the
// fleet's agents do every minute or so, on a SQLite file.
//
//	go test ./internal/hub -run '^$' -bench CreateActivityLog -benchmem -benchtime 3000x -count 5
func BenchmarkCreateActivityLog(b *testing.B) {
	h := newTestHub(b)
	bob := h.agents(b, "bob")[0]
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.CreateActivityLog(ctx, bob, hub.ActivityLog{Type: hub.ActivityCreation, Title: "parser done"}); err != nil {
			b.Fatal(err)
		}
	}
}
