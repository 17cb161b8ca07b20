package mcpbridge_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthub/hub/internal/mcpbridge"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func postInitialize(t *testing.T, url string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp, string(b)
}

func TestHTTPSessionsAreTheirTokensAgents(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	url := "http://" + h.HTTPAddress() + "/mcp"
	a, err := httpSession(t, url, h.createAgent(t, "htta"), nil)
	if err != nil {
		t.Fatalf("session A: %v", err)
	}
	b, err := httpSession(t, url, h.createAgent(t, "httb"), nil)
	if err != nil {
		t.Fatalf("session B: %v", err)
	}

	var sa, sb mcpbridge.StatusOutput
	mustCall(t, a, "check_hub_status", nil, &sa)
	mustCall(t, b, "check_hub_status", nil, &sb)
	if sa.Agent != "htta" || sb.Agent != "httb" {
		t.Fatalf("agents = %q, %q; want htta, httb", sa.Agent, sb.Agent)
	}

	// B parks over HTTP (with progress), A posts over HTTP, B wakes.
	var peek mcpbridge.WaitOutput
	mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &peek)
	type woke struct {
		out mcpbridge.WaitOutput
		at  time.Time
	}
	done := make(chan woke, 1)
	go func() {
		var w mcpbridge.WaitOutput
		mustCall(t, b, "wait_for_messages", map[string]any{"after": peek.Cursor, "timeout_seconds": 30}, &w)
		done <- woke{w, time.Now()}
	}()
	eventuallyTrue(t, 5*time.Second, "B to park", func() bool { return h.parkedWaiters(t) == 1 })
	var post mcpbridge.PostMessageOutput
	posted := time.Now()
	mustCall(t, a, "post_message", map[string]any{"to": []string{"httb"}, "body": "over http"}, &post)
	select {
	case r := <-done:
		if r.out.TimedOut || len(r.out.Messages) != 1 || r.out.Messages[0].From != "htta" {
			t.Fatalf("B woke with %+v, want A's message", r.out)
		}
		t.Logf("HTTP wake-up latency: %v", r.at.Sub(posted))
	case <-time.After(20 * time.Second):
		t.Fatal("B did not wake within 20s of the post")
	}

	// A cannot see B's message.
	var read mcpbridge.ReadMessagesOutput
	mustCall(t, a, "read_messages", map[string]any{"all": true, "after": "0"}, &read)
	for _, m := range read.Messages {
		if m.ID == post.ID && !contains(m.To, "htta") {
			t.Errorf("A read B's message %s", m.ID)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestHTTPProgressNotifications(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	// The hub serves /mcp with the default 10 s progress interval; this
	// test mounts its own handler with a short one over the hub's client.
	srv := newHTTPServer(t, h, mcpbridge.Options{ProgressInterval: 100 * time.Millisecond})
	got := make(chan float64, 100)
	cs, err := httpSession(t, srv, h.createAgent(t, "progress"), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params.Progress },
	})
	if err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 1}}
	params.SetProgressToken("p")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if n := len(got); n < 3 {
		t.Errorf("got %d progress notifications over HTTP in a 1s wait at 100ms, want several", n)
	}
}

func TestHTTPRefusesMissingWrongAndForeignTokens(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	url := "http://" + h.HTTPAddress() + "/mcp"

	resp, body := postInitialize(t, url, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(strings.ToLower(body), "authorization: bearer") {
		t.Errorf("no token: %d %q, want 401 explaining the header", resp.StatusCode, body)
	}
	resp, body = postInitialize(t, url, http.Header{"Authorization": {"Bearer wrong"}})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d %q, want 401", resp.StatusCode, body)
	}
	if _, err := httpSession(t, url, "wrong", nil); err == nil {
		t.Errorf("a client with a wrong token connected")
	}

	// A session opened by A cannot be used with B's token.
	tokA, tokB := h.createAgent(t, "owner"), h.createAgent(t, "intruder")
	resp, _ = postInitialize(t, url, http.Header{"Authorization": {"Bearer " + tokA}})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("A's initialize: %d, session %q", resp.StatusCode, sid)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check_hub_status","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+tokB)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusForbidden {
		t.Errorf("B's token on A's session: %d, want 403", resp2.StatusCode)
	}
}

// newHTTPServer serves a bridge HTTP handler over the hub's in-process
// connection and returns its /mcp URL.
func newHTTPServer(t *testing.T, h *testHub, opts mcpbridge.Options) string {
	t.Helper()
	handler := mcpbridge.NewHTTPHandlerWithClient(agentClient(h), opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := newLoopbackServer(t, mux)
	return srv + "/mcp"
}
