package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkWaitWithMessageWaiting runs, on a SQLite file, the waits of an
// agent that has a message waiting, as the gRPC server runs them: Begin
// (the first look), Park, Finish. The message stays unread, so every wait
// returns it at once. Reported: the store's read transactions per wait
// (reads/op).
//
//	go test ./internal/hub -run '^$' -bench WaitWithMessageWaiting -benchtime 20000x
func BenchmarkWaitWithMessageWaiting(b *testing.B) {
	for _, bc := range []struct {
		name  string
		after bool
	}{{"unread", false}, {"after_id", true}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newTestHub(b)
			_, aliceToken := h.agent(b, "alice")
			_, bobToken := h.agent(b, "bob")
			st := &readCounter{Store: h.DB}
			svc := h.over(b, st)
			ctx := context.Background()
			alice, err := svc.Authenticate(ctx, aliceToken)
			if err != nil {
				b.Fatal(err)
			}
			bob, err := svc.Authenticate(ctx, bobToken)
			if err != nil {
				b.Fatal(err)
			}
			first, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "first"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "waiting"}); err != nil {
				b.Fatal(err)
			}
			req := hub.WaitRequest{TimeoutSeconds: seconds(30)}
			if bc.after {
				req.AfterID = hub.FormatMessageID(first.ID)
			}
			st.views.Store(0)
			b.ResetTimer()
			for range b.N {
				w, err := svc.Begin(ctx, bob, req)
				if err != nil {
					b.Fatal(err)
				}
				w.Park(ctx)
				r, err := w.Finish(ctx)
				if err != nil || len(r.Messages) == 0 {
					b.Fatalf("Wait = %+v, %v; want the message waiting", r, err)
				}
			}
			b.ReportMetric(float64(st.views.Load())/float64(b.N), "reads/op")
		})
	}
}
