package app_test

import (
	"context"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// BenchmarkStreamCalls compares an agent's heartbeat, its peek at its
// messages (a wait of 0 s: a read and the reply's status) and a hook's
// injection with nothing new made as calls of their own and carried by
// its stream of wake-ups, one after the other
// over real loopback gRPC, and reports the process's CPU time per call
// (cpu-µs/call: the hub and the client, which run in this process).
//
//	go test -run '^$' -bench BenchmarkStreamCalls -benchtime 2000x -count 3 ./internal/app/
func BenchmarkStreamCalls(b *testing.B) {
	m := relHub(b, func(m *app.Main) {
		m.RateLimit = admission.RateLimit{}
		m.ReadLimit = admission.RateLimit{}
	})
	tok := relCreateAgent(b, m, "alice")
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	client := hubv1.NewAgentServiceClient(conn)
	ctx := coreBearer(tok)
	calls := map[string]struct {
		alone func() error
		call  func() *hubv1.StreamCall
	}{
		"heartbeat": {
			alone: func() error { _, err := client.Heartbeat(ctx, &hubv1.HeartbeatRequest{}); return err },
			call: func() *hubv1.StreamCall {
				return &hubv1.StreamCall{Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}}
			},
		},
		"take_injection": {
			alone: func() error { _, err := client.TakeInjection(ctx, &hubv1.TakeInjectionRequest{}); return err },
			call: func() *hubv1.StreamCall {
				return &hubv1.StreamCall{Call: &hubv1.StreamCall_TakeInjection{TakeInjection: &hubv1.TakeInjectionRequest{}}}
			},
		},
		"peek": {
			alone: func() error {
				_, err := client.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)})
				return err
			},
			call: func() *hubv1.StreamCall {
				return &hubv1.StreamCall{Call: &hubv1.StreamCall_WaitForMessages{WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)}}}
			},
		},
	}
	for _, name := range []string{"heartbeat", "peek", "take_injection"} {
		c := calls[name]
		b.Run(name+"/alone", func(b *testing.B) {
			if err := c.alone(); err != nil { // a warm path
				b.Fatal(err)
			}
			cpu0 := processCPU(b)
			b.ResetTimer()
			for range b.N {
				if err := c.alone(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
		})
		b.Run(name+"/stream", func(b *testing.B) {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			st, err := openStream(sctx, client, &hubv1.SubscribeRequest{Watch: true})
			if err == nil {
				_, err = st.Recv()
			}
			if err != nil {
				b.Fatal(err)
			}
			id := uint64(0)
			call := func() error {
				id++
				sc := c.call()
				sc.Id = id
				if err := st.Send(&hubv1.SubscribeRequest{Call: sc}); err != nil {
					return err
				}
				for {
					f, err := st.Recv()
					if err != nil {
						return err
					}
					if r := f.GetReply(); r != nil {
						if e := r.GetError(); e != nil {
							b.Fatalf("call %d: %v", id, e)
						}
						return nil
					}
				}
			}
			if err := call(); err != nil { // a warm path
				b.Fatal(err)
			}
			cpu0 := processCPU(b)
			b.ResetTimer()
			for range b.N {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
		})
	}
}
