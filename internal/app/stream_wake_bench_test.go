package app_test

import (
	"context"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// BenchmarkStreamWake measures one wake of a stream over real loopback
// gRPC: bob posts to alice, whose stream sends the message in a frame,
// and alice confirms it on the stream; allocations per op are those of
// the hub and the client (this process), the post's included.
//
//	go test -run '^$' -bench BenchmarkStreamWake -benchtime 2000x -count 3 ./internal/app/
func BenchmarkStreamWake(b *testing.B) {
	m := relHub(b, func(m *app.Main) {
		m.RateLimit = admission.RateLimit{}
		m.ReadLimit = admission.RateLimit{}
	})
	alice, bob := relCreateAgent(b, m, "alice"), relCreateAgent(b, m, "bob")
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	client := hubv1.NewAgentServiceClient(conn)
	ctx, cancel := context.WithCancel(coreBearer(alice))
	defer cancel()
	st, err := openStream(ctx, client, &hubv1.SubscribeRequest{Via: "channel"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		b.Fatal(err)
	}
	bctx := coreBearer(bob)
	wake := func() {
		if _, err := client.PostMessage(bctx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "a wake"}); err != nil {
			b.Fatal(err)
		}
		for {
			f, err := st.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if len(f.GetMessages()) > 0 {
				if err := st.Send(&hubv1.SubscribeRequest{ConfirmIds: []string{f.GetMessages()[0].GetId()}}); err != nil {
					b.Fatal(err)
				}
				return
			}
		}
	}
	wake() // a warm path
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		wake()
	}
}
