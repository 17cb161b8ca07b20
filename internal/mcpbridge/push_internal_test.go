package mcpbridge

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

func TestChannelNotificationNamesKindAndPulse(t *testing.T) {
	tests := []struct {
		name   string
		msgs   []Message
		header string
		kind   string
		pulse  bool
	}{
		{"pulse", []Message{{ID: "7", From: "orchestrator", SenderKind: "hub", To: []string{"bob"}, Kind: "pulse", Body: "beat 3"}},
			"A pulse from orchestrator (hub) via Agent Hub", "pulse", true},
		{"nudge", []Message{{ID: "8", From: "orchestrator", SenderKind: "hub", To: []string{"bob"}, Kind: "nudge", Body: "log a reflection"}},
			"A nudge from orchestrator (hub) via Agent Hub", "nudge", false},
		{"channel message", []Message{{ID: "9", From: "alice", SenderKind: "agent", Channel: "#ops", Body: "deploying"}},
			"A message from agent alice via Agent Hub", "message", false},
		{"mixed batch", []Message{
			{ID: "10", From: "alice", SenderKind: "agent", To: []string{"bob"}, Body: "hi"},
			{ID: "11", From: "orchestrator", SenderKind: "hub", To: []string{"bob"}, Kind: "pulse", Body: "beat 4"},
		}, "2 messages from alice (agent), orchestrator (hub) via Agent Hub", "message,pulse", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, shown := channelNotification(tt.msgs)
			if want := ids(tt.msgs); !slices.Equal(shown, want) {
				t.Errorf("shown = %v, want every message of the batch, %v", shown, want)
			}
			if !strings.HasPrefix(p.Content, tt.header) {
				t.Errorf("content starts %q, want %q", p.Content[:min(len(p.Content), 80)], tt.header)
			}
			if !strings.Contains(strings.SplitN(p.Content, "\n", 2)[0], "not the user") {
				t.Errorf("header %q does not say it is not from the user", strings.SplitN(p.Content, "\n", 2)[0])
			}
			if p.Meta["kind"] != tt.kind {
				t.Errorf("meta kind = %q, want %q", p.Meta["kind"], tt.kind)
			}
			if got := strings.Contains(p.Content, "respond_to_pulse"); got != tt.pulse {
				t.Errorf("pulse hint present = %v, want %v", got, tt.pulse)
			}
			if _, ok := p.Meta["more"]; ok {
				t.Errorf("meta more = %q for a batch within the bound", p.Meta["more"])
			}
		})
	}
	if p, _ := channelNotification([]Message{{ID: "9", From: "alice", Channel: "#ops", Body: "x"}}); p.Meta["channel"] != "#ops" {
		t.Errorf("meta channel = %q, want #ops", p.Meta["channel"])
	}
}

// A notification past pushContentMax leaves messages out: only those it
// shows are confirmed, the rest stay for the agent to read.
func TestChannelNotificationShowsWhatFits(t *testing.T) {
	t.Parallel()
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{ID: strconv.Itoa(i + 1), From: "alice", To: []string{"bob"}, Body: strings.Repeat("x", pushBodyMax)})
	}
	p, shown := channelNotification(msgs)
	if len(shown) == 0 || len(shown) >= len(msgs) || p.Meta["more"] != strconv.Itoa(len(msgs)-len(shown)) {
		t.Fatalf("shown %v of %d, meta more %q: want some shown, the rest counted in more", shown, len(msgs), p.Meta["more"])
	}
	for _, m := range msgs {
		if in := strings.Contains(p.Content, "\n["+m.ID+"] alice"); in != slices.Contains(shown, m.ID) {
			t.Errorf("message %s: in the content %v, counted as shown %v", m.ID, in, !in)
		}
	}
}

func ids(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// staleCursorHub refuses any cursor beyond its newest message (7), as a
// hub with another data dir would, and answers the read cursor with
// message 7; later calls park until the caller gives up.
type staleCursorHub struct {
	hubv1.AgentServiceClient // nil: any other method panics
	afters                   chan string
	confirmed                chan []string
}

func (h *staleCursorHub) ConfirmDelivery(_ context.Context, in *hubv1.ConfirmDeliveryRequest, _ ...grpc.CallOption) (*hubv1.ConfirmDeliveryResponse, error) {
	if in.GetVia() != "channel" {
		return nil, status.Errorf(codes.InvalidArgument, "via %q", in.GetVia())
	}
	h.confirmed <- in.GetIds()
	return &hubv1.ConfirmDeliveryResponse{}, nil
}

// Subscribe answers as a hub without streams does: the pusher long-polls.
func (h *staleCursorHub) Subscribe(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame], error) {
	return nil, status.Error(codes.Unimplemented, "unknown method Subscribe")
}

func (h *staleCursorHub) WaitForMessages(ctx context.Context, in *hubv1.WaitForMessagesRequest, _ ...grpc.CallOption) (*hubv1.WaitForMessagesResponse, error) {
	h.afters <- in.GetAfterId()
	switch in.GetAfterId() {
	case "99":
		return nil, status.Error(codes.InvalidArgument, "after_id 99 is beyond the newest message (7)")
	case "":
		return &hubv1.WaitForMessagesResponse{Messages: []*hubv1.Message{{Id: "7", From: "alice", To: []string{"bob"}, Body: "hi"}}, Cursor: "7"}, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestPusherRestartsAtTheReadCursorWhenItsCursorIsRefused(t *testing.T) {
	h := &staleCursorHub{afters: make(chan string, 10), confirmed: make(chan []string, 10)}
	sent := make(chan channelParams, 1)
	p := &pusher{client: h, opts: Options{}.withDefaults(), cursor: "99",
		send: func(_ context.Context, c channelParams) error { sent <- c; return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()

	var afters []string
	for range 3 {
		afters = append(afters, <-h.afters)
	}
	if !slices.Equal(afters, []string{"99", "", "7"}) {
		t.Errorf("cursors asked for = %v, want 99 (refused), then the read cursor, then 7", afters)
	}
	if c := <-sent; c.Meta["message_id"] != "7" {
		t.Errorf("pushed %v, want message 7", c.Meta)
	}
	if got := <-h.confirmed; !slices.Equal(got, []string{"7"}) {
		t.Errorf("confirmed %v, want message 7 once pushed", got)
	}
}

// silentStreamHub's Subscribe opens a stream that sends nothing, as a hub
// whose Subscribe reads one request (a server stream) does for a bridge
// that keeps its side open to confirm on it; its WaitForMessages reports
// the path it was asked for and parks.
type silentStreamHub struct {
	hubv1.AgentServiceClient // nil: any other method panics
	waits                    chan string
}

func (h *silentStreamHub) Subscribe(ctx context.Context, _ ...grpc.CallOption) (grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame], error) {
	return &silentStream{ctx: ctx}, nil
}

func (h *silentStreamHub) WaitForMessages(ctx context.Context, in *hubv1.WaitForMessagesRequest, _ ...grpc.CallOption) (*hubv1.WaitForMessagesResponse, error) {
	h.waits <- in.GetVia()
	<-ctx.Done()
	return nil, ctx.Err()
}

type silentStream struct {
	grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame] // nil: any other method panics
	ctx                                                                    context.Context
}

func (s *silentStream) Send(*hubv1.SubscribeRequest) error { return nil }

func (s *silentStream) Recv() (*hubv1.SubscribeFrame, error) {
	<-s.ctx.Done()
	return nil, s.ctx.Err()
}

// A hub that sends no first frame within firstFrameMax is served as one
// without streams: the pusher long-polls it.
func TestPusherLongPollsAHubWithoutAFirstFrame(t *testing.T) {
	clock := hub.NewFakeClock(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC))
	h := &silentStreamHub{waits: make(chan string, 1)}
	p := &pusher{client: h, opts: Options{Clock: clock}.withDefaults(),
		send: func(context.Context, channelParams) error { return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(5 * time.Second); clock.Timers() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pusher never waited for a first frame")
		}
	}
	select {
	case via := <-h.waits:
		t.Fatalf("the pusher long-polled (via %q) before the first frame's time ran out", via)
	default:
	}
	clock.Advance(firstFrameMax)
	select {
	case via := <-h.waits:
		if via != viaChannel {
			t.Errorf("long-poll via %q, want %q", via, viaChannel)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pusher did not long-poll a hub that sent no first frame")
	}
}
