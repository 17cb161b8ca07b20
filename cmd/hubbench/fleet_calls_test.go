package main

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// callsHub is a hub that takes calls on its streams (its first frame
// lists more), answering each from its counts, and counts the calls made
// alone.
type callsHub struct {
	hubv1.UnimplementedAgentServiceServer
	more []string

	mu             sync.Mutex
	carried, alone map[string]int
}

func (h *callsHub) count(m map[string]int, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m[name]++
}

func (h *callsHub) counts() (carried, alone map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, a := map[string]int{}, map[string]int{}
	for k, v := range h.carried {
		c[k] = v
	}
	for k, v := range h.alone {
		a[k] = v
	}
	return c, a
}

func (h *callsHub) Subscribe(ss grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame]) error {
	if _, err := ss.Recv(); err != nil {
		return err
	}
	if err := ss.Send(&hubv1.SubscribeFrame{Cursor: "0", Calls: true, MoreCalls: h.more}); err != nil {
		return err
	}
	for {
		req, err := ss.Recv()
		if err != nil {
			return nil
		}
		call := req.GetCall()
		if call == nil {
			continue
		}
		r := &hubv1.StreamReply{Id: call.GetId()}
		switch k := call.GetCall().(type) {
		case *hubv1.StreamCall_Heartbeat:
			h.count(h.carried, "heartbeat")
			r.Reply = &hubv1.StreamReply_Heartbeat{Heartbeat: &hubv1.HeartbeatResponse{}}
		case *hubv1.StreamCall_MarkRead:
			h.count(h.carried, "mark_read")
			r.Reply = &hubv1.StreamReply_MarkRead{MarkRead: &hubv1.MarkReadResponse{}}
		case *hubv1.StreamCall_TakeInjection:
			h.count(h.carried, "take_injection")
			r.Reply = &hubv1.StreamReply_TakeInjection{TakeInjection: &hubv1.TakeInjectionResponse{Messages: []*hubv1.Message{{Id: "7"}}}}
		case *hubv1.StreamCall_ConfirmDelivery:
			h.count(h.carried, "confirm_delivery:"+k.ConfirmDelivery.GetVia())
			r.Reply = &hubv1.StreamReply_ConfirmDelivery{ConfirmDelivery: &hubv1.ConfirmDeliveryResponse{}}
		}
		if err := ss.Send(&hubv1.SubscribeFrame{Reply: r}); err != nil {
			return err
		}
	}
}

func (h *callsHub) Heartbeat(context.Context, *hubv1.HeartbeatRequest) (*hubv1.HeartbeatResponse, error) {
	h.count(h.alone, "heartbeat")
	return &hubv1.HeartbeatResponse{}, nil
}

func (h *callsHub) MarkRead(context.Context, *hubv1.MarkReadRequest) (*hubv1.MarkReadResponse, error) {
	h.count(h.alone, "mark_read")
	return &hubv1.MarkReadResponse{}, nil
}

// TestStreamAgentsCallOnTheirStream: an agent holding a stream makes its
// heartbeats, marks and its hooks' injections (with their confirmation,
// via hook) as calls on the stream, as hub mcp does; on a hub whose
// stream takes no injection the hook goes to the hub, and before the
// stream is open every call is made alone.
func TestStreamAgentsCallOnTheirStream(t *testing.T) {
	for _, tc := range []struct {
		name       string
		more       []string
		hookOnHub  bool
		wantStream map[string]int
	}{
		{"a hub that takes injections", []string{"take_injection", "confirm_delivery"}, false,
			map[string]int{"heartbeat": 1, "mark_read": 1, "take_injection": 1, "confirm_delivery:hook": 1}},
		{"a hub that does not", nil, true, map[string]int{"heartbeat": 1, "mark_read": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &callsHub{more: tc.more, carried: map[string]int{}, alone: map[string]int{}}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			hubv1.RegisterAgentServiceServer(srv, h)
			go srv.Serve(l)
			t.Cleanup(srv.Stop)
			g := &grpcAgent{addr: l.Addr().String(), source: net.IPv4(127, 0, 0, 1), ref: &agentRef{name: "ann", token: "tok"}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := g.connect(ctx); err != nil {
				t.Fatal(err)
			}
			defer g.close()
			if err := g.heartbeat(ctx); err != nil {
				t.Fatal(err)
			}
			if _, a := h.counts(); a["heartbeat"] != 1 {
				t.Fatalf("a heartbeat with no stream open: alone %v, want one", a)
			}
			framed := make(chan struct{})
			var once sync.Once
			sctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- g.subscribe(sctx, "", func([]string, string, time.Time, func([]string) error) { once.Do(func() { close(framed) }) })
			}()
			<-framed
			if err := g.heartbeat(ctx); err != nil {
				t.Fatal(err)
			}
			if err := g.markRead(ctx, "5"); err != nil {
				t.Fatal(err)
			}
			carried, err := g.hookOnStream(ctx)
			if err != nil || carried == tc.hookOnHub {
				t.Fatalf("the hook's injection: carried %v, %v; want carried %v", carried, err, !tc.hookOnHub)
			}
			stop()
			<-done
			c, a := h.counts()
			if len(c) != len(tc.wantStream) {
				t.Errorf("calls on the stream %v, want %v", c, tc.wantStream)
			}
			for k, v := range tc.wantStream {
				if c[k] != v {
					t.Errorf("calls on the stream %v, want %v", c, tc.wantStream)
				}
			}
			if a["heartbeat"] != 1 || a["mark_read"] != 0 {
				t.Errorf("calls alone %v, want the first heartbeat only", a)
			}
		})
	}
}
