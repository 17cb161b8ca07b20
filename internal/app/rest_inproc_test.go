package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
)

// restCall sends a REST request with a bearer token, an optional JSON body
// and extra headers; it returns the response (body read) and its body.
func restCall(t *testing.T, m *app.Main, method, path, token, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+m.HTTPAddress()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the body: %v", method, path, err)
	}
	return resp, string(b)
}

// logLines returns the hub's JSON "rpc" log lines for method.
func logLines(t *testing.T, logs *lockedBuffer, method string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "rpc" && rec["method"] == method {
			out = append(out, rec)
		}
	}
	return out
}

// REST calls run in process (no gRPC connection carries them), and what
// the gateway takes from a call still reaches the HTTP client: the request
// ID header, Retry-After from the rate limiter's trailer, the client's
// Grpc-Timeout as the call's deadline, and the error codes as HTTP codes.
func TestRESTRunsInProcess(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		// One write, then one every 10 s: the second post is refused.
		m.RateLimit = admission.RateLimit{PerSecond: 0.1, Burst: 1}
	})
	alice := relCreateAgent(t, m, "alice")
	relCreateAgent(t, m, "bob")
	post := `{"to":["bob"],"body":"hi"}`

	resp, body := restCall(t, m, "POST", "/v1/messages", alice, post, map[string]string{"X-Request-Id": "rest-inproc-1"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") != "rest-inproc-1" {
		t.Errorf("REST post: HTTP %d, X-Request-Id %q, %s; want 200 and the client's ID back", resp.StatusCode, resp.Header.Get("X-Request-Id"), body)
	}
	// A header only a gRPC transport adds: none crossed one.
	if ct := resp.Header.Get("Grpc-Metadata-Content-Type"); ct != "" {
		t.Errorf("REST reply carries the gRPC transport's content type %q", ct)
	}
	lines := logLines(t, logs, "/hub.v1.AgentService/PostMessage")
	if len(lines) != 1 {
		t.Fatalf("PostMessage log lines = %d, want 1:\n%s", len(lines), logs.String())
	}
	if got := lines[0]; got["via"] != "inproc" || got["peer"] != "127.0.0.1" || got["agent"] != "alice" || got["request_id"] != "rest-inproc-1" {
		t.Errorf("REST post logged as %v, want via inproc, peer 127.0.0.1 (the HTTP client), agent alice, the client's request ID", got)
	}

	// Past the burst: 429, with the limiter's own wait (about 10 s, not
	// the gateway's default of 1) and a generated request ID.
	resp, body = restCall(t, m, "POST", "/v1/messages", alice, post, nil)
	if resp.StatusCode != http.StatusTooManyRequests || !between(resp.Header.Get("Retry-After"), 5, 10) {
		t.Errorf("REST post past the burst: HTTP %d, Retry-After %q, %s; want 429 with Retry-After 5-10 from the trailer", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if id := resp.Header.Get("X-Request-Id"); len(id) != 16 {
		t.Errorf("refused REST post: X-Request-Id %q, want a generated ID", id)
	}

	// Error codes as HTTP codes.
	admin := relAdminToken(t, m)
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/v1/admin/agents/nobody", admin, http.StatusNotFound},
		{"GET", "/v1/admin/agents", alice, http.StatusForbidden},
		{"POST", "/v1/admin/agents", admin, http.StatusBadRequest}, // no name
	} {
		if resp, body := restCall(t, m, c.method, c.path, c.token, "{}", nil); resp.StatusCode != c.want {
			t.Errorf("%s %s: HTTP %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.want)
		}
	}

	// The client's Grpc-Timeout bounds the call: a 50 s wait given one
	// second answers that it timed out, long before 50 s.
	done := make(chan struct{})
	var waitResp *http.Response
	var waitBody string
	go func() {
		defer close(done)
		waitResp, waitBody = restCall(t, m, "POST", "/v1/messages:wait", alice, `{"timeout_seconds":50}`, map[string]string{"Grpc-Timeout": "1S"})
	}()
	select {
	case <-done:
		if waitResp.StatusCode != http.StatusOK || !strings.Contains(waitBody, `"timed_out":true`) {
			t.Errorf("wait with Grpc-Timeout 1S: HTTP %d %s, want 200 and timed_out", waitResp.StatusCode, waitBody)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a wait with Grpc-Timeout 1S did not end within 30 s: the deadline did not reach the call")
	}
}
