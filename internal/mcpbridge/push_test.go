package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// channelEvent is a notifications/claude/channel notification as it is on
// the wire.
type channelEvent struct {
	Content string            `json:"content"`
	Meta    map[string]string `json:"meta"`
}

// ids is the message IDs the event carries (shown and counted).
func (e channelEvent) ids() []string { return strings.Split(e.Meta["message_id"], ",") }

// channelCatcher is a client transport that hands the channel
// notifications it reads to the test and passes everything else to the
// go-sdk client (which does not know the method).
type channelCatcher struct {
	mcp.Transport
	events chan channelEvent
}

func newCatcher(t mcp.Transport) *channelCatcher {
	return &channelCatcher{Transport: t, events: make(chan channelEvent, 1000)}
}

func (c *channelCatcher) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &catchConn{Connection: conn, events: c.events}, nil
}

type catchConn struct {
	mcp.Connection
	events chan channelEvent
}

func (c *catchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/claude/channel" {
			if r.ID.IsValid() {
				return nil, fmt.Errorf("channel notification sent as a call (id %v)", r.ID.Raw())
			}
			var e channelEvent
			if err := json.Unmarshal(r.Params, &e); err != nil {
				return nil, fmt.Errorf("channel params %s: %w", r.Params, err)
			}
			c.events <- e
			continue
		}
		return m, nil
	}
}

// next returns the next channel event, failing after 20 s.
func (c *channelCatcher) next(tb testing.TB) channelEvent {
	tb.Helper()
	select {
	case e := <-c.events:
		return e
	case <-time.After(20 * time.Second):
		tb.Fatal("no channel notification within 20s")
		return channelEvent{}
	}
}

// legacyHandshake makes the go-sdk client open the session with initialize
// and notifications/initialized, as Claude Code does; the pushes start on
// notifications/initialized. (By default the go-sdk client first tries the
// sessionless server/discover handshake.)
var legacyHandshake = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// channelBridge runs the bridge with channel notifications on over
// in-memory transports and returns the client session and its catcher.
func channelBridge(tb testing.TB, addr, token string) (*mcp.ClientSession, *channelCatcher) {
	tb.Helper()
	var catcher *channelCatcher
	wrap := func(t mcp.Transport) mcp.Transport { catcher = newCatcher(t); return catcher }
	cs := bridgeOver(tb, addr, token, mcpbridge.Options{Channel: true}, nil, wrap, legacyHandshake)
	return cs, catcher
}

// poster posts as one agent straight over gRPC.
type poster struct {
	client hubv1.AgentServiceClient
	ctx    context.Context
}

func newPoster(tb testing.TB, addr, token string) *poster {
	tb.Helper()
	conn, err := mcpbridge.Dial(addr, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &poster{client: hubv1.NewAgentServiceClient(conn), ctx: metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)}
}

func (p *poster) post(tb testing.TB, req *hubv1.PostMessageRequest) string {
	tb.Helper()
	// WaitForReady: right after a hub restart the call waits for the
	// connection instead of failing.
	r, err := p.client.PostMessage(p.ctx, req, grpc.WaitForReady(true))
	if err != nil {
		tb.Fatalf("post %q: %v", req.GetBody(), err)
	}
	return r.GetMessage().GetId()
}

func TestChannelPushesAPostedMessageWithoutAToolCall(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	cs, ch := channelBridge(t, h.GRPCAddress(), h.createAgent(t, "bob"))

	caps := cs.InitializeResult().Capabilities
	if _, ok := caps.Experimental["claude/channel"]; !ok {
		t.Fatalf("capabilities %+v: want experimental claude/channel", caps)
	}
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(t) == 1 })

	first := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	e := ch.next(t)
	if e.Meta["message_id"] != first || e.Meta["from"] != "alice" || e.Meta["kind"] != "message" {
		t.Errorf("meta = %v, want message_id %s from alice, kind message", e.Meta, first)
	}
	for _, want := range []string{"A message from agent alice via Agent Hub", "not the user", "[" + first + "] alice (agent) → bob: the build is green", "stay unread"} {
		if !strings.Contains(e.Content, want) {
			t.Errorf("content %q lacks %q", e.Content, want)
		}
	}

	reply := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "and deployed", ReplyTo: first})
	e = ch.next(t)
	if e.Meta["message_id"] != reply || e.Meta["thread"] != first {
		t.Errorf("reply meta = %v, want message_id %s, thread %s", e.Meta, reply, first)
	}

	// A push marks nothing read.
	var st mcpbridge.StatusOutput
	mustCall(t, cs, "check_hub_status", nil, &st)
	if st.UnreadCount != 2 {
		t.Errorf("unread after two pushes = %d, want 2", st.UnreadCount)
	}

	// The push loop holds one parked wait; the agent's own waits still park
	// and wake beside it.
	done := make(chan WaitOutput, 3)
	for range 3 {
		go func() {
			var w WaitOutput
			mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 30, "after": reply}, &w)
			done <- w
		}()
	}
	eventuallyTrue(t, 10*time.Second, "three waits beside the push loop", func() bool { return h.parkedWaiters(t) == 4 })
	third := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "one more"})
	for range 3 {
		if w := <-done; len(w.Messages) != 1 || w.Messages[0].ID != third {
			t.Errorf("wait beside the push loop = %+v, want message %s", w, third)
		}
	}
	// The waits put it in bob's context: the push loop passes it over,
	// unless it took it first. Either way the pushes go on.
	fourth := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "and the last one"})
	for {
		e = ch.next(t)
		if id := e.Meta["message_id"]; id == fourth || id == third+","+fourth {
			break
		} else if id != third {
			t.Fatalf("push = %v, want message %s (or %s first)", e.Meta, fourth, third)
		}
	}
}

func TestChannelBatchesABurstWithAnOverflowLine(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	carol := newPoster(t, h.GRPCAddress(), h.createAgent(t, "carol"))
	tok := h.createAgent(t, "bob")

	// The burst lands before the bridge starts; its cursor starts at bob's
	// read cursor, so the whole unread burst is pushed, in one notification.
	var ids []string
	long := strings.Repeat("é", 3000) // 6,000 bytes: cut at the per-body bound
	ids = append(ids, alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: long}))
	for i := range 29 {
		p := alice
		if i%2 == 1 {
			p = carol
		}
		ids = append(ids, p.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("burst %02d %s", i, strings.Repeat("x", 400))}))
	}
	_, ch := channelBridge(t, h.GRPCAddress(), tok)
	e := ch.next(t)
	if got := e.ids(); !slices.Equal(got, ids) {
		t.Fatalf("batched IDs = %v, want %v", got, ids)
	}
	if e.Meta["from"] != "alice,carol" {
		t.Errorf("from = %q, want alice,carol", e.Meta["from"])
	}
	if !strings.Contains(e.Content, "30 messages from agents alice, carol via Agent Hub") || !strings.Contains(e.Content, "not the user") {
		t.Errorf("header: %q", e.Content[:200])
	}
	if !strings.Contains(e.Content, "[cut at 2000 of 6000 bytes: read_messages shows it whole]") {
		t.Error("the 6,000-byte body is not cut at the per-body bound")
	}
	if strings.Count(e.Content, "é") > 1000 {
		t.Error("more than 2,000 bytes of the long body are shown")
	}
	more := e.Meta["more"]
	var n int
	if _, err := fmt.Sscan(more, &n); err != nil || n <= 0 || n >= 29 {
		t.Fatalf("meta more = %q, want some but not all of the burst left out", more)
	}
	shown, rest := ids[:30-n], ids[30-n:]
	before, _ := strconv.Atoi(rest[0])
	wantLine := fmt.Sprintf("%d more messages not shown here (IDs %s to %s): read them with read_messages after=%d.", n, rest[0], rest[n-1], before-1)
	if !strings.Contains(e.Content, wantLine) {
		t.Errorf("content lacks the overflow line %q", wantLine)
	}
	for _, id := range shown {
		if !strings.Contains(e.Content, "["+id+"]") {
			t.Errorf("shown message %s missing from the content", id)
		}
	}
	for _, id := range rest {
		if strings.Contains(e.Content, "["+id+"]") {
			t.Errorf("message %s past the bound is shown in full", id)
		}
	}
	if len(e.Content) > 8000+1000 {
		t.Errorf("content is %d bytes, want about the 8,000-byte bound", len(e.Content))
	}

	// The cursor moved past the burst: the next push is the next post only.
	next := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "after the burst"})
	if e = ch.next(t); !slices.Equal(e.ids(), []string{next}) {
		t.Errorf("next push = %v, want only %s", e.ids(), next)
	}
}

func TestChannelLosesAndRepeatsNothingAcrossAHubRestart(t *testing.T) {
	t.Parallel()
	addr, start := restartableHub(t)
	h := start()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	_, ch := channelBridge(t, addr, h.createAgent(t, "bob"))
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(t) == 1 })

	// A burst: half before the hub stops, half after it is back.
	var posted []string
	for i := range 10 {
		posted = append(posted, alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("before %d", i)}))
	}
	h.Close()
	h = start()
	t.Cleanup(func() { h.Close() })
	for i := range 10 {
		posted = append(posted, alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("after %d", i)}))
	}

	var got []string
	for len(got) < len(posted) {
		got = append(got, ch.next(t).ids()...)
	}
	if !slices.Equal(got, posted) {
		t.Fatalf("pushed across the restart:\n got  %v\n want %v (each once, in order)", got, posted)
	}
	// Nothing more follows: a marker posted last is the very next push.
	marker := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "marker"})
	if e := ch.next(t); !slices.Equal(e.ids(), []string{marker}) {
		t.Errorf("push after the burst = %v, want only the marker %s", e.ids(), marker)
	}
	// Every push was confirmed, on the stream or, for what the stopped
	// hub may not have read, by a call: each message is in bob's context
	// through the channel, none left queued by the restart.
	for _, id := range append(posted, marker) {
		eventuallyTrue(t, 10*time.Second, "message "+id+" in bob's context", func() bool { return h.receipt(t, id, "bob").GetState() == "IN_CONTEXT" })
		if r := h.receipt(t, id, "bob"); r.GetVia() != "channel" {
			t.Errorf("message %s: receipt %v, want in context via channel", id, r)
		}
	}
}

// mcpChannelProcess starts `hub mcp` with extra environment and connects
// a go-sdk client to it over stdio, catching channel notifications.
func (h *e2eHub) mcpChannelProcess(t *testing.T, token string, env ...string) (*mcp.ClientSession, *channelCatcher) {
	t.Helper()
	cmd := exec.Command(h.bin, "mcp")
	cmd.Env = append(append(os.Environ(), "HUB_ADDR="+h.grpc, "HUB_TOKEN="+token), env...)
	cmd.Stderr = os.Stderr
	catcher := newCatcher(&mcp.CommandTransport{Command: cmd})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, nil).Connect(context.Background(), catcher, legacyHandshake)
	if err != nil {
		t.Fatalf("start hub mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, catcher
}

func TestChannelFromTheHubMCPProcess(t *testing.T) {
	t.Parallel()
	h := startHubProcess(t)
	alice := newPoster(t, h.grpc, h.createAgent(t, "alice"))
	bobTok := h.createAgent(t, "bob")

	cs, ch := h.mcpChannelProcess(t, bobTok)
	if _, ok := cs.InitializeResult().Capabilities.Experimental["claude/channel"]; !ok {
		t.Fatal("hub mcp does not declare claude/channel by default")
	}
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parked(t) == 1 })
	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "over stdio"})
	if e := ch.next(t); e.Meta["message_id"] != id || !strings.Contains(e.Content, "over stdio") {
		t.Errorf("push = %+v, want message %s", e, id)
	}
	cs.Close()
	eventuallyTrue(t, 10*time.Second, "the first process's push loop to end", func() bool { return h.parked(t) == 0 })

	// HUB_MCP_CHANNEL=off: no capability, no push; the bridge follows bob
	// on a watch stream, which carries no message.
	cs, ch = h.mcpChannelProcess(t, bobTok, "HUB_MCP_CHANNEL=off")
	if _, ok := cs.InitializeResult().Capabilities.Experimental["claude/channel"]; ok {
		t.Error("HUB_MCP_CHANNEL=off still declares claude/channel")
	}
	mustCall(t, cs, "check_hub_status", nil, nil)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream to park", func() bool { return h.parked(t) == 1 })
	alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "not pushed"})
	// The post is committed; a wait as bob returns it, and no notification
	// came before that answer on the same stdio stream.
	var w WaitOutput
	mustCall(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 5, "after": id}, &w)
	if len(w.Messages) != 1 {
		t.Fatalf("wait = %+v, want the second post", w)
	}
	select {
	case e := <-ch.events:
		t.Errorf("HUB_MCP_CHANNEL=off pushed %+v", e)
	default:
	}
}

// TestChannelOnlyToAClientThatReadsIt: a client that is not Claude Code
// and does not declare claude/channel (Codex, an SDK client) gets no push,
// so the hub never counts a message in its context through a channel
// nobody reads: the message stays queued, not even delivered, until a path
// the host confirms. The bridge follows the agent on a watch stream only.
func TestChannelOnlyToAClientThatReadsIt(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	bobToken := h.createAgent(t, "bob")
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpbridge.Run(ctx, st, h.GRPCAddress(), bobToken, mcpbridge.Options{Channel: true}) }()
	catcher := newCatcher(ct)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "codex-mcp-client"}, nil).Connect(ctx, catcher, legacyHandshake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	var status mcpbridge.StatusOutput
	mustCall(t, cs, "check_hub_status", nil, &status) // the session is up

	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream to park", func() bool { return h.parkedWaiters(t) == 1 })
	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "are you there"})
	// No push comes.
	select {
	case e := <-catcher.events:
		t.Fatalf("a channel notification reached a client that did not declare the channel: %v", e.Meta)
	case <-time.After(500 * time.Millisecond):
	}
	r, err := alice.client.GetMessageReceipts(alice.ctx, &hubv1.GetMessageReceiptsRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if rc := r.GetReceipts(); len(rc) != 1 || rc[0].GetState() == "IN_CONTEXT" || rc[0].GetVia() != "" || rc[0].GetDeliveredAt() != nil {
		t.Errorf("receipts = %v, want bob's still queued and not delivered (the watch stream carries nothing)", rc)
	}
}
