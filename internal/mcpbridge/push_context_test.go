package mcpbridge_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// receipt returns agent's receipt of message id, as the admin sees it.
func (h *testHub) receipt(tb testing.TB, id, agent string) *hubv1.Receipt {
	tb.Helper()
	r, err := hubv1.NewAgentServiceClient(h.Conn()).GetMessageReceipts(h.adminCtx(), &hubv1.GetMessageReceiptsRequest{Id: id})
	if err != nil {
		tb.Fatalf("receipts of %s: %v", id, err)
	}
	for _, rc := range r.GetReceipts() {
		if rc.GetAgent() == agent {
			return rc
		}
	}
	tb.Fatalf("message %s has no receipt for %s", id, agent)
	return nil
}

// A message the channel pushed is in the agent's context through the
// channel, once the transport took the notification.
func TestChannelPushPutsTheMessageInContext(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	_, ch := channelBridge(t, h.GRPCAddress(), h.createAgent(t, "bob"))
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(t) == 1 })
	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	if e := ch.next(t); e.Meta["message_id"] != id {
		t.Fatalf("pushed %v, want %s", e.Meta, id)
	}
	eventuallyTrue(t, 10*time.Second, "the push to be confirmed", func() bool { return h.receipt(t, id, "bob").GetState() == "IN_CONTEXT" })
	if r := h.receipt(t, id, "bob"); r.GetVia() != "channel" || r.GetInContextAt() == nil || r.GetRead() {
		t.Errorf("receipt = %v, want in context via channel, not read", r)
	}
}

// refusingTransport is the bridge's stdio side whose connection does not
// take channel notifications (the pipe to the host broke, say); every other
// message goes through.
type refusingTransport struct {
	mcp.Transport
	refused chan string
}

func (t *refusingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &refusingConn{Connection: c, refused: t.refused}, nil
}

type refusingConn struct {
	mcp.Connection
	refused chan string
}

func (c *refusingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/claude/channel" {
		c.refused <- string(r.Params)
		return errors.New("broken pipe")
	}
	return c.Connection.Write(ctx, m)
}

// A channel notification the transport did not take leaves the message
// queued: handed to the path (delivered), never in the agent's context.
func TestChannelPushNotTakenStaysQueued(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newPoster(t, h.GRPCAddress(), h.createAgent(t, "alice"))
	bobTok := h.createAgent(t, "bob")
	refused := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() {
		done <- mcpbridge.Run(ctx, &refusingTransport{Transport: st, refused: refused}, h.GRPCAddress(), bobTok, mcpbridge.Options{Channel: true})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, nil).Connect(ctx, ct, legacyHandshake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(t) == 1 })
	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "lost in the pipe"})
	select {
	case <-refused:
	case <-time.After(20 * time.Second):
		t.Fatal("no channel notification was tried")
	}
	eventuallyTrue(t, 10*time.Second, "the push loop to stop", func() bool { return h.parkedWaiters(t) == 0 })
	r := h.receipt(t, id, "bob")
	if r.GetState() != "QUEUED" || r.GetInContextAt() != nil || r.GetVia() != "" || r.GetDeliveredAt() == nil {
		t.Errorf("receipt = %v, want QUEUED (delivered to the channel path, never in context)", r)
	}
}

// presenceOf returns agent's presence and live paths as the admin sees them.
func (h *testHub) presenceOf(tb testing.TB, agent string) (string, []string) {
	tb.Helper()
	r, err := h.admin.GetAgent(h.adminCtx(), &hubv1.GetAgentRequest{Name: agent})
	if err != nil {
		tb.Fatal(err)
	}
	var live []string
	for _, p := range r.GetAgent().GetPaths() {
		if p.GetLive() {
			live = append(live, p.GetKind())
		}
	}
	return r.GetAgent().GetPresence(), live
}

// A session its client closes ends the agent's session in the hub: over
// stdio (the client closes the pipe) the agent is offline at once and its
// channel path closed; over HTTP (DELETE /mcp) offline at once too.
func TestClosedSessionsEndTheAgentsSession(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs, _ := channelBridge(t, h.GRPCAddress(), h.createAgent(t, "bob"))
	mustCall(t, cs, "check_hub_status", nil, nil)
	// The push loop's stream parks as a wait, then opens the channel path.
	eventuallyTrue(t, 10*time.Second, "the push loop to park", func() bool { return h.parkedWaiters(t) == 1 })
	eventuallyTrue(t, 10*time.Second, "bob waiting on the channel path", func() bool {
		p, live := h.presenceOf(t, "bob")
		return p == "waiting" && len(live) == 1 && live[0] == "channel"
	})
	cs.Close()
	eventuallyTrue(t, 10*time.Second, "bob offline with no live path", func() bool {
		p, live := h.presenceOf(t, "bob")
		return p == "offline" && len(live) == 0
	})

	url := "http://" + h.HTTPAddress() + "/mcp"
	tok := h.createAgent(t, "carol")
	hs, err := httpSession(t, url, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, hs, "check_hub_status", nil, nil)
	if p, _ := h.presenceOf(t, "carol"); p != "active" {
		t.Fatalf("carol after a call: %s, want active", p)
	}
	if code := deleteSession(t, url, tok, hs.ID()); code != http.StatusNoContent {
		t.Fatalf("DELETE = %d", code)
	}
	if p, _ := h.presenceOf(t, "carol"); p != "offline" {
		t.Errorf("carol after DELETE /mcp: %s, want offline at once", p)
	}
}
