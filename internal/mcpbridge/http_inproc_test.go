package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
)

// lockedBuffer collects log lines written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// rpcLines returns the hub's "rpc" log lines for method.
func (l *lockedBuffer) rpcLines(t *testing.T, method string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(l.b.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "rpc" && rec["method"] == method {
			out = append(out, rec)
		}
	}
	return out
}

// The hub's /mcp calls the API in process, and each call is still the
// agent's own gRPC call: logged and authenticated by the interceptors, under
// the write rate limit, and ended when the agent's token is revoked.
func TestHTTPToolCallsRunInProcessThroughTheInterceptors(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	h := startHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		// Three writes, then none for a long while: no refill during the test.
		m.RateLimit = admission.RateLimit{PerSecond: 0.001, Burst: 3}
	})
	url := "http://" + h.HTTPAddress() + "/mcp"
	alice := h.createAgent(t, "alice")
	h.createAgent(t, "bob")

	// A wrong token is refused when the session opens.
	if _, err := httpSession(t, url, "not-a-token", nil); err == nil {
		t.Error("a session opened with a wrong token")
	}

	cs, err := httpSession(t, url, alice, nil)
	if err != nil {
		t.Fatalf("alice's session: %v", err)
	}
	var posted struct{ ID string }
	mustCall(t, cs, "post_message", map[string]any{"to": []string{"bob"}, "body": "hello"}, &posted)

	// The call went through the logging interceptor, as alice, from the
	// in-process peer: no gRPC connection carried it.
	lines := logs.rpcLines(t, "/hub.v1.AgentService/PostMessage")
	if len(lines) != 1 {
		t.Fatalf("PostMessage log lines = %d, want 1: %v", len(lines), lines)
	}
	if got := lines[0]; got["agent"] != "alice" || got["peer"] != "inproc" || got["code"] != "OK" {
		t.Errorf("PostMessage logged as %v, want agent alice, peer inproc, code OK", got)
	}

	// The write rate limit applies: the burst is three writes.
	mustCall(t, cs, "post_message", map[string]any{"to": []string{"bob"}, "body": "two"}, nil)
	mustCall(t, cs, "post_message", map[string]any{"to": []string{"bob"}, "body": "three"}, nil)
	res := call(t, cs, "post_message", map[string]any{"to": []string{"bob"}, "body": "four"}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "busy") {
		t.Errorf("fourth post: %s, want the hub-busy error of a rate-limited call", resultText(res))
	}
	if lines := logs.rpcLines(t, "/hub.v1.AgentService/PostMessage"); len(lines) != 4 || lines[3]["code"] != "ResourceExhausted" {
		t.Errorf("the refused post was not logged as ResourceExhausted: %v", lines)
	}

	// A parked wait ends when the token is revoked, and the token is
	// refused from then on.
	waited := make(chan *mcp.CallToolResult, 1)
	go func() {
		waited <- call(t, cs, "wait_for_messages", map[string]any{"timeout_seconds": 50}, nil)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for h.parkedWaiters(t) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the wait did not park")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := h.admin.RevokeToken(h.adminCtx(), &hubv1.RevokeTokenRequest{Name: "alice"}); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	select {
	case res := <-waited:
		if !res.IsError || !strings.Contains(resultText(res), "refused this agent's token") {
			t.Errorf("parked wait after revocation: %s, want the refused-token error", resultText(res))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the parked wait did not end when the token was revoked")
	}
	// Then the session ends: a call on it is refused (the session is
	// gone, or its token refused), at once.
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "check_hub_status", Arguments: map[string]any{}})
	if err == nil && (!res.IsError || !strings.Contains(resultText(res), "refused this agent's token")) {
		t.Errorf("call with the revoked token: %s, want the refused-token error or the session ended", resultText(res))
	}
}
