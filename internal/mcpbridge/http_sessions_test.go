package mcpbridge_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// deleteSession sends DELETE /mcp for a session and returns the status.
func deleteSession(t *testing.T, url, token, sessionID string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE session (the wait parked in it is 45 s long): %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// DELETE /mcp of a session whose wait_for_messages is parked cancels the
// wait and answers at once.
func TestHTTPDeleteCancelsParkedWait(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	url := "http://" + h.HTTPAddress() + "/mcp"
	tok := h.createAgent(t, "deleter")
	cs, err := httpSession(t, url, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The session is closed under the call: it ends without a result.
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"timeout_seconds": 45}})
	}()
	eventuallyTrue(t, 10*time.Second, "the wait is parked", func() bool { return h.parkedWaiters(t) == 1 })
	if code := deleteSession(t, url, tok, cs.ID()); code != http.StatusNoContent {
		t.Errorf("DELETE = %d, want 204", code)
	}
	eventuallyTrue(t, 10*time.Second, "the parked wait ended", func() bool { return h.parkedWaiters(t) == 0 })
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the client's wait_for_messages call did not end after DELETE")
	}
}

// A token opening sessions without end holds at most MaxSessionsPerToken:
// each new one closes the oldest, which then answers 404; other tokens'
// sessions are untouched.
func TestHTTPSessionsPerTokenBounded(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	handler := mcpbridge.NewHTTPHandlerWithClient(agentClient(h), mcpbridge.Options{MaxSessionsPerToken: 3})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	url := newLoopbackServer(t, mux) + "/mcp"
	other, err := httpSession(t, url, h.createAgent(t, "quiet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := h.createAgent(t, "opener")
	var ids []string
	for range 10 {
		resp, _ := postInitialize(t, url, http.Header{"Authorization": {"Bearer " + tok}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	if got := handler.Sessions(); got != 4 {
		t.Errorf("sessions = %d, want 4 (3 of the opener, 1 other)", got)
	}
	if got := handler.SessionsEvicted(); got != 7 {
		t.Errorf("evicted = %d, want 7", got)
	}
	if code := deleteSession(t, url, tok, ids[0]); code != http.StatusNotFound {
		t.Errorf("DELETE of an evicted session = %d, want 404", code)
	}
	if code := deleteSession(t, url, tok, ids[9]); code != http.StatusNoContent {
		t.Errorf("DELETE of the newest session = %d, want 204", code)
	}
	mustCall(t, other, "check_hub_status", nil, &mcpbridge.StatusOutput{})
}

// mcpSessions reads the hub's count of MCP sessions from /metrics.
func mcpSessions(t *testing.T, h *testHub) int {
	t.Helper()
	resp, err := http.Get("http://" + h.HTTPAddress() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "hub_mcp_sessions "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("mcp_sessions %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("no hub_mcp_sessions in /metrics:\n%s", b)
	return 0
}

// Revoking an agent's token ends its MCP sessions, after their parked
// calls answered: the parked wait_for_messages returns its refused-token
// error first, then every session of the agent closes (a request on it is
// refused at once), and other agents' sessions stay.
func TestHTTPRevokedTokenEndsItsSessions(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	url := "http://" + h.HTTPAddress() + "/mcp"
	tok := h.createAgent(t, "revoked")
	cs, err := httpSession(t, url, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := httpSession(t, url, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := httpSession(t, url, h.createAgent(t, "kept"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := mcpSessions(t, h); n != 3 {
		t.Fatalf("sessions = %d, want 3", n)
	}
	waited := make(chan *mcp.CallToolResult, 1)
	go func() {
		waited <- call(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 50}, nil)
	}()
	eventuallyTrue(t, 10*time.Second, "the wait is parked", func() bool { return h.parkedWaiters(t) == 1 })
	if _, err := h.admin.RevokeToken(h.adminCtx(), &hubv1.RevokeTokenRequest{Name: "revoked"}); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-waited:
		if !res.IsError || !strings.Contains(resultText(res), "refused this agent's token") {
			t.Errorf("parked wait after revocation: %s, want the refused-token error", resultText(res))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the parked wait did not answer when the token was revoked")
	}
	eventuallyTrue(t, 10*time.Second, "the revoked agent's sessions closed", func() bool { return mcpSessions(t, h) == 1 })
	for name, s := range map[string]*mcp.ClientSession{"the waiting session": cs, "the idle session": idle} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "check_hub_status", Arguments: map[string]any{}})
		cancel()
		if err == nil || time.Since(start) > 5*time.Second {
			t.Errorf("a call on %s after the revocation: %v after %s, want refused at once", name, err, time.Since(start).Round(time.Millisecond))
		}
	}
	mustCall(t, other, "check_hub_status", nil, &mcpbridge.StatusOutput{})
}
