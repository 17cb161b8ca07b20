package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkStreamLook is the store's share of a stream's wake-up: one look
// after the stream's cursor, which finds the message waiting ("found") or
// nothing new ("nothing"), on a SQLite file.
//
//	go test ./internal/hub -run '^$' -bench StreamLook -benchtime 20000x -count 3
func BenchmarkStreamLook(b *testing.B) {
	for _, bc := range []struct {
		name  string
		found int
	}{{"found", 1}, {"nothing", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newTestHub(b)
			ags := h.agents(b, "alice", "bob")
			alice, bob := ags[0], ags[1]
			ctx := context.Background()
			before := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "before the stream's cursor"})
			st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel", AfterID: hub.FormatMessageID(before.ID)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(st.Close)
			if bc.found == 1 {
				h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "after the stream's cursor"})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if n, err := st.Look(); err != nil || n != bc.found {
					b.Fatalf("look found %d messages, %v; want %d", n, err, bc.found)
				}
			}
		})
	}
}
