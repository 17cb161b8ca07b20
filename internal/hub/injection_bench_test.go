package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkTakeInjectionNothingNew is a hook's injection that finds
// nothing new, as most do (a read, no write), on a SQLite file.
//
//	go test ./internal/hub -run '^$' -bench TakeInjectionNothingNew -benchtime 20000x -count 3
func BenchmarkTakeInjectionNothingNew(b *testing.B) {
	h := newTestHub(b)
	ags := h.agents(b, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "injected once"})
	if in, err := h.TakeInjection(ctx, bob, 0); err != nil || len(in.Messages) != 1 {
		b.Fatalf("first injection = %+v, %v; want the message", in, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if in, err := h.TakeInjection(ctx, bob, 0); err != nil || len(in.Messages) != 0 {
			b.Fatalf("injection = %+v, %v; want nothing new", in, err)
		}
	}
}

// BenchmarkTakeInjectionSomethingNew is a hook's injection that finds one
// new message (posted untimed before each), on a SQLite file.
//
//	go test ./internal/hub -run '^$' -bench TakeInjectionSomethingNew -benchmem -benchtime 3000x -count 5
func BenchmarkTakeInjectionSomethingNew(b *testing.B) {
	h := newTestHub(b)
	ags := h.agents(b, "alice", "bob")
	alice, bob := ags[0], ags[1]
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		m := h.post(b, alice, hub.PostRequest{To: []string{"bob"}, Body: "injected"})
		b.StartTimer()
		if in, err := h.TakeInjection(ctx, bob, 0); err != nil || len(in.Messages) != 1 || in.Cursor != m.ID {
			b.Fatalf("injection = %+v, %v; want message %d", in, err, m.ID)
		}
	}
}
