package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkHeartbeat is an agent's heartbeat with three unread messages,
// on a SQLite file: the write the fleet's agents make most after taking
// injections.
//
//	go test ./internal/hub -run '^$' -bench 'Heartbeat$' -benchmem -benchtime 5000x -count 5
func BenchmarkHeartbeat(b *testing.B) {
	h := newTestHub(b)
	ags := h.agents(b, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	for range 3 {
		h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "unread"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if r, err := h.Heartbeat(ctx, bob); err != nil || r.Unread != 3 {
			b.Fatalf("heartbeat = %+v, %v; want 3 unread", r, err)
		}
	}
}
