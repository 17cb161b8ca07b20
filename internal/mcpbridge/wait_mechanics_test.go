package mcpbridge

// These tests use a stand-in for the hub because they are about the MCP
// mechanics only: progress notifications while parked, and that a
// cancelled request or a closed session cancels the gRPC wait at once.
// Everything else is tested against a real hub.

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// parkingHub implements only WaitForMessages: it parks until released or
// until the caller's context ends, and counts parked calls.
type parkingHub struct {
	hubv1.AgentServiceClient // nil: any other method panics

	parked    atomic.Int32
	started   chan struct{} // receives once per parked call
	release   chan struct{} // closing it ends every wait with a message
	cancelled chan error    // receives the ctx error of a wait that ended by cancellation
}

func newParkingHub() *parkingHub {
	return &parkingHub{
		started:   make(chan struct{}, 8),
		release:   make(chan struct{}),
		cancelled: make(chan error, 8),
	}
}

func (p *parkingHub) WaitForMessages(ctx context.Context, in *hubv1.WaitForMessagesRequest, _ ...grpc.CallOption) (*hubv1.WaitForMessagesResponse, error) {
	p.parked.Add(1)
	defer p.parked.Add(-1)
	p.started <- struct{}{}
	select {
	case <-p.release:
		return &hubv1.WaitForMessagesResponse{
			Messages: []*hubv1.Message{{Id: "7", From: "alice", To: []string{"bob"}, Body: "hi"}},
			Cursor:   "7",
			Status:   &hubv1.Status{UnreadCount: 1},
		}, nil
	case <-ctx.Done():
		p.cancelled <- ctx.Err()
		return nil, ctx.Err()
	}
}

// connect runs a server over the fake hub and returns a connected client
// session.
func connect(t *testing.T, hub hubv1.AgentServiceClient, opts Options, copts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(hub, opts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return cs, ss
}

func waitStarted(t *testing.T, hub *parkingHub) {
	t.Helper()
	select {
	case <-hub.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the wait never reached the hub")
	}
}

func TestWaitSendsProgressWhileParked(t *testing.T) {
	t.Parallel()
	h := newParkingHub()
	clock := hub.NewFakeClock(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC))
	got := make(chan *mcp.ProgressNotificationParams, 8)
	cs, _ := connect(t, h, Options{ProgressInterval: 10 * time.Second, Clock: clock}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			got <- req.Params
		},
	})

	params := &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 30}}
	params.SetProgressToken("tok-1")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			t.Errorf("CallTool: %v", err)
		}
		done <- res
	}()
	waitStarted(t, h)
	var notes []*mcp.ProgressNotificationParams
	for i := range 3 {
		clock.Advance(10 * time.Second)
		select {
		case n := <-got:
			notes = append(notes, n)
		case <-time.After(5 * time.Second):
			t.Fatalf("no progress notification %d after %d intervals", i+1, i+1)
		}
	}
	close(h.release)
	res := <-done
	if res == nil || res.IsError {
		t.Fatalf("result = %+v, want a successful wake-up", res)
	}
	last := -1.0
	for i, n := range notes {
		if n.ProgressToken != "tok-1" {
			t.Errorf("notification %d: token = %v, want tok-1", i, n.ProgressToken)
		}
		if want := 10 * float64(i+1); n.Progress != want {
			t.Errorf("notification %d: progress %v, want %v (seconds waited)", i, n.Progress, want)
		}
		if n.Progress <= last {
			t.Errorf("notification %d: progress %v did not increase from %v", i, n.Progress, last)
		}
		last = n.Progress
		if n.Total != 30 {
			t.Errorf("notification %d: total = %v, want 30", i, n.Total)
		}
	}
}

func TestWaitWithoutProgressTokenSendsNone(t *testing.T) {
	t.Parallel()
	h := newParkingHub()
	clock := hub.NewFakeClock(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC))
	var count atomic.Int32
	cs, _ := connect(t, h, Options{ProgressInterval: 10 * time.Second, Clock: clock}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { count.Add(1) },
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_messages"}); err != nil {
			t.Errorf("CallTool: %v", err)
		}
	}()
	waitStarted(t, h)
	if n := clock.Timers(); n != 0 {
		t.Fatalf("a wait without a progress token holds %d timers, want none", n)
	}
	clock.Advance(time.Minute)
	close(h.release)
	<-done
	if n := count.Load(); n != 0 {
		t.Fatalf("got %d progress notifications without a progress token, want 0", n)
	}
}

func TestCancelledRequestCancelsTheHubWait(t *testing.T) {
	t.Parallel()
	hub := newParkingHub()
	cs, _ := connect(t, hub, Options{}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 60}})
		errc <- err
	}()
	waitStarted(t, hub)
	start := time.Now()
	cancel() // the client sends notifications/cancelled
	select {
	case err := <-hub.cancelled:
		if err != context.Canceled {
			t.Errorf("hub wait ended with %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the hub wait was not cancelled within 2s of the client's cancellation")
	}
	t.Logf("hub wait cancelled %v after the client cancelled", time.Since(start))
	<-errc
	eventually(t, func() bool { return hub.parked.Load() == 0 }, "parked waits back to 0")
}

func TestClosedSessionCancelsTheHubWait(t *testing.T) {
	t.Parallel()
	hub := newParkingHub()
	// Pipes instead of in-memory transports, so the test can end the session
	// the way a dying client process does: its end of the stream closes.
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx := context.Background()
	ss, err := NewServer(hub, Options{}).Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_messages"})
	waitStarted(t, hub)
	c2sW.Close()
	s2cR.Close()
	select {
	case err := <-hub.cancelled:
		if err != context.Canceled {
			t.Errorf("hub wait ended with %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the hub wait was not cancelled within 2s of the session ending")
	}
	eventually(t, func() bool { return hub.parked.Load() == 0 }, "parked waits back to 0")
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
