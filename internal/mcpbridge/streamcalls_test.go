package mcpbridge_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// rpcCount returns how many calls of the AgentService method the hub at
// httpAddr answered as calls of their own ("": of every method): its
// hub_rpcs_total less the calls a stream carried (hub_stream_calls_total).
func rpcCount(t *testing.T, httpAddr, method string) int64 {
	alone, _ := rpcCounts(t, httpAddr, method)
	return alone
}

// rpcCounts returns how many calls of the AgentService method ("": of
// every method) the hub at httpAddr answered as calls of their own, and
// how many a stream carried (/metrics).
func rpcCounts(t *testing.T, httpAddr, method string) (alone, carried int64) {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		all, stream := strings.HasPrefix(line, "hub_rpcs_total{"), strings.HasPrefix(line, "hub_stream_calls_total{")
		if !all && !stream || method != "" && !strings.Contains(line, `method="`+method+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if all {
			alone += int64(v)
		} else {
			alone -= int64(v)
			carried += int64(v)
		}
	}
	return alone, carried
}

// streamBridge runs the stdio bridge for token, opened as the hosts open
// it (initialize, then notifications/initialized): it holds its stream of
// wake-ups from then on.
func streamBridge(tb testing.TB, addr, token string) *mcp.ClientSession {
	tb.Helper()
	return bridgeOver(tb, addr, token, mcpbridge.Options{}, nil, func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
}

func messageIDs(ms []mcpbridge.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// hub mcp makes its agent's heartbeats, waits and reads on the stream of
// wake-ups it holds: the hub answers none of them as a call of its own,
// and what a wait hands out is in the agent's context via wait, as the
// wait made alone records it.
func TestBridgeWaitsReadsAndBeatsOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	cs := streamBridge(t, h.GRPCAddress(), h.createAgent(t, "bob"))
	web := h.HTTPAddress()
	// The stream opens once the client initialized: from then on a
	// heartbeat is not a call.
	eventuallyTrue(t, 10*time.Second, "a heartbeat carried by the stream", func() bool {
		before := rpcCount(t, web, "Heartbeat")
		var out mcpbridge.HeartbeatOutput
		mustCall(t, cs, "heartbeat", nil, &out)
		return out.HeartbeatID != "" && rpcCount(t, web, "Heartbeat") == before
	})
	beats := rpcCount(t, web, "Heartbeat")

	posted := []string{
		alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "one"}),
		alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "two"}),
	}
	var w mcpbridge.WaitOutput
	mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 5}, &w)
	if got := messageIDs(w.Messages); !slices.Equal(got, posted) || w.Cursor != posted[1] || w.TimedOut {
		t.Fatalf("wait = %+v, want %v with the cursor at the last", w, posted)
	}
	for _, id := range posted {
		eventuallyTrue(t, 10*time.Second, "message "+id+" in bob's context", func() bool { return h.receipt(t, id, "bob").GetState() == "IN_CONTEXT" })
		if r := h.receipt(t, id, "bob"); r.GetVia() != "wait" {
			t.Errorf("message %s: receipt %v, want in context via wait", id, r)
		}
	}

	// A wait parks on the stream until a post wakes it.
	woken := make(chan mcpbridge.WaitOutput, 1)
	go func(after string) {
		var w mcpbridge.WaitOutput
		call(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 30, "after": after}, &w)
		woken <- w
	}(w.Cursor)
	eventuallyTrue(t, 10*time.Second, "the wait parked beside the stream", func() bool { return h.parkedWaiters(t) == 2 })
	third := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "three"})
	select {
	case w := <-woken:
		if got := messageIDs(w.Messages); !slices.Equal(got, []string{third}) {
			t.Fatalf("the parked wait woke with %v, want %s", got, third)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the parked wait did not wake on the post")
	}

	var r mcpbridge.ReadMessagesOutput
	mustCall(t, cs, "read_messages", map[string]any{"mark_read": true}, &r)
	if got := messageIDs(r.Messages); !slices.Equal(got, append(posted, third)) || r.UnreadCount == nil || *r.UnreadCount != 0 {
		t.Fatalf("read_messages = %+v, want %v, then none unread", r, append(posted, third))
	}
	for _, m := range []string{"WaitForMessages", "ListMessages", "MarkRead"} {
		if n := rpcCount(t, web, m); n != 0 {
			t.Errorf("the hub answered %d %s calls, want none: the stream carries them", n, m)
		}
	}
	if n := rpcCount(t, web, "Heartbeat"); n != beats {
		t.Errorf("the hub answered %d Heartbeat calls, want %d", n, beats)
	}
}

// pastHub is a hub from before streams carried calls: its first frame
// does not say it takes them (or, with noStream, it serves no stream at
// all); it answers waits and heartbeats as calls, and ends a stream whose
// later request carries anything but confirmations.
type pastHub struct {
	hubv1.UnimplementedAgentServiceServer
	noStream     bool
	framed       chan struct{} // closed once the first frame was sent, or the stream refused
	waits, beats atomic.Int32
	ended        atomic.Int32 // streams it ended for a request it did not take
	once         sync.Once
}

func (p *pastHub) Subscribe(ss grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame]) error {
	if p.noStream {
		defer p.once.Do(func() { close(p.framed) })
		return status.Error(codes.Unimplemented, "unknown method Subscribe")
	}
	if _, err := ss.Recv(); err != nil {
		return err
	}
	err := ss.Send(&hubv1.SubscribeFrame{Cursor: "0", Status: &hubv1.Status{}})
	p.once.Do(func() { close(p.framed) })
	if err != nil {
		return err
	}
	for {
		req, err := ss.Recv()
		if err != nil {
			return nil
		}
		if len(req.GetConfirmIds()) == 0 {
			p.ended.Add(1)
			return status.Error(codes.InvalidArgument, "a later request of the stream carries confirm_ids only")
		}
	}
}

func (p *pastHub) WaitForMessages(context.Context, *hubv1.WaitForMessagesRequest) (*hubv1.WaitForMessagesResponse, error) {
	p.waits.Add(1)
	return &hubv1.WaitForMessagesResponse{Messages: []*hubv1.Message{{Id: "5", From: "alice", To: []string{"bob"}, Body: "hi"}}, Cursor: "5"}, nil
}

func (p *pastHub) Heartbeat(context.Context, *hubv1.HeartbeatRequest) (*hubv1.HeartbeatResponse, error) {
	p.beats.Add(1)
	return &hubv1.HeartbeatResponse{HeartbeatId: "20261202080000"}, nil
}

// Against a hub whose stream takes no calls, or that serves no stream,
// hub mcp makes its waits and heartbeats as calls, as before.
func TestBridgeCallsAloneOnAHubWithoutStreamCalls(t *testing.T) {
	t.Parallel()
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("noStream=%v", noStream), func(t *testing.T) {
			t.Parallel()
			past := &pastHub{noStream: noStream, framed: make(chan struct{})}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			hubv1.RegisterAgentServiceServer(srv, past)
			go srv.Serve(l)
			t.Cleanup(srv.Stop)
			cs := streamBridge(t, l.Addr().String(), "tok")
			// Past the first frame (or the refusal of the stream): the
			// calls that follow do not ride it.
			select {
			case <-past.framed:
			case <-time.After(10 * time.Second):
				t.Fatal("the bridge opened no stream")
			}
			var hb mcpbridge.HeartbeatOutput
			mustCall(t, cs, "heartbeat", nil, &hb)
			var w mcpbridge.WaitOutput
			mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 1}, &w)
			if hb.HeartbeatID != "20261202080000" || !slices.Equal(messageIDs(w.Messages), []string{"5"}) {
				t.Fatalf("heartbeat %+v, wait %+v: want the past hub's replies", hb, w)
			}
			if past.beats.Load() != 1 || past.waits.Load() != 1 || past.ended.Load() != 0 {
				t.Fatalf("the past hub answered %d heartbeats and %d waits as calls and ended %d streams for a request it did not take, want 1, 1 and 0",
					past.beats.Load(), past.waits.Load(), past.ended.Load())
			}
		})
	}
}

// The hub restarted under a bridge whose waits ride its stream: the wait
// parked at the stop ends, the bridge holds a new stream on the new hub,
// and waits from the last cursor hand out every message once.
func TestBridgeWaitsAcrossAHubRestart(t *testing.T) {
	t.Parallel()
	addr, start := restartableHub(t)
	h := start()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	cs := streamBridge(t, addr, h.createAgent(t, "bob"))
	eventuallyTrue(t, 10*time.Second, "the bridge's stream", func() bool { return h.parkedWaiters(t) == 1 })

	first := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "before"})
	var w mcpbridge.WaitOutput
	mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 5}, &w)
	got := messageIDs(w.Messages)
	cursor := w.Cursor

	parked := make(chan struct{})
	go func() {
		defer close(parked)
		call(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 30, "after": cursor}, nil)
	}()
	eventuallyTrue(t, 10*time.Second, "the wait parked beside the stream", func() bool { return h.parkedWaiters(t) == 2 })
	h.Close()
	select {
	case <-parked:
	case <-time.After(20 * time.Second):
		t.Fatal("the wait parked at the stop did not end")
	}
	h = start()
	t.Cleanup(func() { h.Close() })
	eventuallyTrue(t, 10*time.Second, "the bridge's stream on the new hub", func() bool { return h.parkedWaiters(t) == 1 })
	after := []string{
		alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "after 1"}),
		alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "after 2"}),
	}
	for len(got) < 3 {
		var w mcpbridge.WaitOutput
		mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 5, "after": cursor}, &w)
		got = append(got, messageIDs(w.Messages)...)
		cursor = w.Cursor
	}
	if want := append([]string{first}, after...); !slices.Equal(got, want) {
		t.Fatalf("waits across the restart handed out %v, want %v (each once)", got, want)
	}
	for _, id := range after {
		if r := h.receipt(t, id, "bob"); r.GetState() != "IN_CONTEXT" || r.GetVia() != "wait" {
			t.Errorf("message %s: receipt %v, want in context via wait", id, r)
		}
	}
}
