package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/loopback"
)

// runBenchFloor is `hub bench-floor`, left out of the usage: hubbench's
// floor scenario. It serves the AgentService on --grpc-addr with the hub's
// transport (app.TransportOptions) and handlers that do no work but route:
// a stream of wake-ups (Subscribe) is held and answers each call it
// carries with an empty reply, a post is a frame on as many held streams
// as it has recipients (a channel's --channel-members − 1, drawn at
// random), a heartbeat is answered empty. No authentication, no store, no
// orchestrator: what a fleet's calls and frames cost in gRPC and the Go
// runtime alone, the floor under the hub's own figure.
func runBenchFloor(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub bench-floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("grpc-addr", "127.0.0.1:7700", "where to serve (loopback)")
	members := fs.Int("channel-members", 50, "the members of a channel: a channel post is a frame on this many held streams but one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *members < 1:
		return fmt.Errorf("--channel-members %d: give at least 1", *members)
	case !loopback.Addr(*addr):
		// It answers anyone, with no token: loopback only.
		return fmt.Errorf("--grpc-addr %s: bench-floor serves on a loopback address only (127.0.0.1:PORT)", *addr)
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := grpc.NewServer(app.TransportOptions()...)
	hubv1.RegisterAgentServiceServer(srv, &floorAgents{members: *members})
	go func() { <-ctx.Done(); srv.Stop() }()
	return srv.Serve(lis)
}

// floorAgents is the AgentService of `hub bench-floor`.
type floorAgents struct {
	hubv1.UnimplementedAgentServiceServer
	members int
	ids     atomic.Int64 // the posts' message IDs

	mu   sync.Mutex
	held []*floorStream
}

// floorStream is one held stream: one frame at a time goes on it.
type floorStream struct {
	mu sync.Mutex
	s  hubv1.AgentService_SubscribeServer
}

func (f *floorStream) send(fr *hubv1.SubscribeFrame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.s.Send(fr) // a stream that ended is dropped by its handler
}

func (a *floorAgents) Subscribe(s hubv1.AgentService_SubscribeServer) error {
	if _, err := s.Recv(); err != nil {
		return err
	}
	fs := &floorStream{s: s}
	fs.send(&hubv1.SubscribeFrame{Calls: true})
	a.mu.Lock()
	a.held = append(a.held, fs)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if i := slices.Index(a.held, fs); i >= 0 {
			a.held[i] = a.held[len(a.held)-1]
			a.held = a.held[:len(a.held)-1]
		}
	}()
	for {
		req, err := s.Recv()
		if err != nil {
			return err
		}
		if c := req.GetCall(); c != nil { // a confirmation is read and dropped
			fs.send(&hubv1.SubscribeFrame{Reply: &hubv1.StreamReply{Id: c.GetId(),
				Reply: &hubv1.StreamReply_Heartbeat{Heartbeat: &hubv1.HeartbeatResponse{}}}})
		}
	}
}

func (a *floorAgents) PostMessage(_ context.Context, req *hubv1.PostMessageRequest) (*hubv1.PostMessageResponse, error) {
	id := strconv.FormatInt(a.ids.Add(1), 10)
	m := &hubv1.Message{Id: id, From: "floor", To: req.GetTo(), Channel: req.GetChannel(), Body: req.GetBody(), CreatedAt: timestamppb.Now()}
	n := len(req.GetTo())
	if req.GetChannel() != "" {
		n = a.members - 1
	}
	a.mu.Lock()
	to := make([]*floorStream, 0, n)
	for range min(n, len(a.held)) {
		to = append(to, a.held[rand.IntN(len(a.held))])
	}
	a.mu.Unlock()
	for _, s := range to {
		s.send(&hubv1.SubscribeFrame{Messages: []*hubv1.Message{m}, Cursor: id})
	}
	return &hubv1.PostMessageResponse{Message: m}, nil
}

func (a *floorAgents) Heartbeat(context.Context, *hubv1.HeartbeatRequest) (*hubv1.HeartbeatResponse, error) {
	return &hubv1.HeartbeatResponse{}, nil
}
