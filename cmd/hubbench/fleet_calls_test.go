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
		case *hubv1.StreamCall_NoteHostEvent:
			h.count(h.carried, "note_host_event:"+k.NoteHostEvent.GetEvent())
			r.Reply = &hubv1.StreamReply_NoteHostEvent{NoteHostEvent: &hubv1.NoteHostEventResponse{}}
		case *hubv1.StreamCall_CheckStop:
			h.count(h.carried, "check_stop")
			r.Reply = &hubv1.StreamReply_CheckStop{CheckStop: stopAnswer(k.CheckStop)}
		case *hubv1.StreamCall_EndSession:
			h.count(h.carried, "end_session:"+k.EndSession.GetVia())
			r.Reply = &hubv1.StreamReply_EndSession{EndSession: &hubv1.EndSessionResponse{}}
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

func (h *callsHub) NoteHostEvent(_ context.Context, req *hubv1.NoteHostEventRequest) (*hubv1.NoteHostEventResponse, error) {
	h.count(h.alone, "note_host_event:"+req.GetEvent())
	return &hubv1.NoteHostEventResponse{}, nil
}

func (h *callsHub) TakeInjection(context.Context, *hubv1.TakeInjectionRequest) (*hubv1.TakeInjectionResponse, error) {
	h.count(h.alone, "take_injection")
	return &hubv1.TakeInjectionResponse{Messages: []*hubv1.Message{{Id: "7"}}}, nil
}

func (h *callsHub) ConfirmDelivery(_ context.Context, req *hubv1.ConfirmDeliveryRequest) (*hubv1.ConfirmDeliveryResponse, error) {
	h.count(h.alone, "confirm_delivery:"+req.GetVia())
	return &hubv1.ConfirmDeliveryResponse{}, nil
}

func (h *callsHub) CheckStop(_ context.Context, req *hubv1.CheckStopRequest) (*hubv1.CheckStopResponse, error) {
	h.count(h.alone, "check_stop")
	return stopAnswer(req), nil
}

func (h *callsHub) EndSession(_ context.Context, req *hubv1.EndSessionRequest) (*hubv1.EndSessionResponse, error) {
	h.count(h.alone, "end_session:"+req.GetVia())
	return &hubv1.EndSessionResponse{}, nil
}

// stopAnswer holds a first stop for a message and lets a continuing one go.
func stopAnswer(req *hubv1.CheckStopRequest) *hubv1.CheckStopResponse {
	if req.GetContinuing() {
		return &hubv1.CheckStopResponse{}
	}
	return &hubv1.CheckStopResponse{Hold: true, Messages: []*hubv1.Message{{Id: "9"}}}
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
			ag := &fleetAgent{ref: g.ref, api: g, hooks: g.client, bridge: newBridgeHooks()}
			run := ag.hookRun(ctx)
			if err := run.take(); err != nil || run.carried == tc.hookOnHub {
				t.Fatalf("the hook's injection: carried %v, %v; want carried %v", run.carried, err, !tc.hookOnHub)
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
				t.Errorf("calls alone %v, want the first heartbeat", a)
			}
		})
	}
}

// serveCalls serves h on loopback and returns an agent connected to it:
// holding a stream, with its bridge, when stream.
func serveCalls(t *testing.T, ctx context.Context, h *callsHub, stream bool) *fleetAgent {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hubv1.RegisterAgentServiceServer(srv, h)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	g := &grpcAgent{addr: l.Addr().String(), source: net.IPv4(127, 0, 0, 1), ref: &agentRef{name: "ann", token: "tok"}}
	if err := g.connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.close)
	a := &fleetAgent{ref: g.ref, api: g, hooks: g.client, transport: transportGRPC}
	if !stream {
		return a
	}
	a.transport, a.bridge = transportStream, newBridgeHooks()
	framed := make(chan struct{})
	var once sync.Once
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- g.subscribe(sctx, "", func(ids []string, _ string, _ time.Time, _ func([]string) error) {
			a.bridge.frame(len(ids))
			once.Do(func() { close(framed) })
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	<-framed
	return a
}

// TestHostEventsAsTheBridgeOrTheHookMakesThem: a streaming agent's
// notification, stops and session end are calls on its stream, as hub
// mcp makes them for its hooks, and the tool use after them goes to the
// hub with its note, on the stream too; an agent without a stream makes
// the same calls alone, as hub hook does, noting every tool use. The
// report counts each kind, and the held stop.
func TestHostEventsAsTheBridgeOrTheHookMakesThem(t *testing.T) {
	want := map[string]int{
		"note_host_event:needs_input": 2, // the notification, the stop let go
		"check_stop":                  2, // held, then continuing and let go
		"confirm_delivery:hook":       2, // what the held stop and the injection showed
		"note_host_event:tool_ran":    1,
		"take_injection":              1,
		"note_host_event:session_end": 1,
		"end_session:hook":            1,
	}
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "holding a stream", false: "no stream"}[stream], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			h := &callsHub{more: []string{"take_injection", "confirm_delivery", "note_host_event", "check_stop", "end_session"}, carried: map[string]int{}, alone: map[string]int{}}
			a := serveCalls(t, ctx, h, stream)
			f := &fleet{}
			f.stats = newFleetStats(f, time.Now())
			if stream { // a quiet hook first: the bridge answers it
				a.hook(ctx, f)
				a.hook(ctx, f)
				if got := f.stats.ok[opHookBridge].Load(); got != 1 {
					t.Fatalf("hooks answered by the bridge before any event: %d, want 1", got)
				}
				h.mu.Lock()
				h.carried, h.alone = map[string]int{}, map[string]int{}
				h.mu.Unlock()
			}
			a.notify(ctx, f)
			if held := a.stop(ctx, f, false); !held {
				t.Fatal("the first stop was not held")
			}
			if held := a.stop(ctx, f, true); held {
				t.Fatal("the continuing stop was held")
			}
			a.hook(ctx, f) // after the events: to the hub, with its note
			a.endSession(ctx, f)
			carried, alone := h.counts()
			got, other := carried, alone
			if !stream {
				got, other = alone, carried
			}
			if len(other) != 0 {
				t.Errorf("calls on the other path %v, want none", other)
			}
			if len(got) != len(want) {
				t.Errorf("calls %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("calls %v, want %v", got, want)
					break
				}
			}
			s := f.stats
			if s.ok[opNotify].Load() != 1 || s.ok[opStop].Load() != 2 || s.stopsHeld.Load() != 1 || s.ok[opSessionEnd].Load() != 1 {
				t.Errorf("counted notifications %d, stops %d (held %d), session ends %d; want 1, 2 (1), 1",
					s.ok[opNotify].Load(), s.ok[opStop].Load(), s.stopsHeld.Load(), s.ok[opSessionEnd].Load())
			}
			if onStream := s.hostOnStream.Load(); stream && onStream != 4 || !stream && onStream != 0 {
				t.Errorf("host events on the stream %d (stream %v)", onStream, stream)
			}
		})
	}
}
