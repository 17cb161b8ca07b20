package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkMarkRead is an agent marking everything read on a SQLite file:
// "moved" after a new message each time (the post is not timed),
// "nothing" with nothing new since its last mark.
//
//	go test ./internal/hub -run '^$' -bench MarkRead -benchmem -benchtime 3000x -count 5
func BenchmarkMarkRead(b *testing.B) {
	h := newTestHub(b)
	ags := h.agents(b, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	b.Run("moved", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			m := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "read me"})
			b.StartTimer()
			if unread, cursor, err := h.MarkRead(ctx, bob, ""); err != nil || unread != 0 || cursor != m.ID {
				b.Fatalf("MarkRead = %d unread, cursor %d, %v; want 0 unread, cursor %d", unread, cursor, err, m.ID)
			}
		}
	})
	b.Run("nothing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if unread, _, err := h.MarkRead(ctx, bob, ""); err != nil || unread != 0 {
				b.Fatalf("MarkRead = %d unread, %v; want 0 unread", unread, err)
			}
		}
	})
}
