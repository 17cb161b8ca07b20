package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/gateway"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/inproc"
	"github.com/agenthub/hub/internal/server"
	"github.com/agenthub/hub/internal/store/sqlite"
)

const gwAdminToken = "ahk_gateway-admin"

// gwRig is the REST gateway in front of the real handlers (in process, as
// the hub wires it) and a SQLite file, served by httptest.
type gwRig struct {
	svc  *hub.Services
	http *httptest.Server
}

type gwOptions struct {
	cfg   func(*hub.Config)
	ready func(context.Context) error
	extra map[string]http.Handler
}

func newGWRig(tb testing.TB, o gwOptions) *gwRig {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	cfg := hub.DefaultConfig()
	cfg.AdminTokenHash = hub.HashToken(gwAdminToken)
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	svc := hub.NewServices(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	gate := admission.New(svc.Agents, admission.DefaultOptions())
	srv := server.New(svc, gate, server.Info{}, slog.New(slog.DiscardHandler))
	conn := inproc.New(srv.UnaryInterceptor)
	srv.Register(conn)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	h, err := gateway.New(ctx, conn, gateway.Options{Ready: o.ready, Extra: o.extra, Gate: gate, Version: "v9.9.9"})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(h)
	tb.Cleanup(hs.Close)
	return &gwRig{svc: svc, http: hs}
}

// call sends a request with an optional bearer token and JSON body, and
// returns the status, the headers and the decoded JSON body.
func (r *gwRig) call(tb testing.TB, ctx context.Context, method, path, token, body string) (int, http.Header, map[string]any) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.http.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := r.http.Client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, nil
		}
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	var v map[string]any
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			tb.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, b, err)
		}
	}
	return res.StatusCode, res.Header, v
}

// parked waits until the hub holds n parked waits.
func (r *gwRig) parked(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for r.svc.Core.ParkedWaits() != n {
		if time.Now().After(deadline) {
			tb.Fatalf("parked waits = %d, want %d", r.svc.Core.ParkedWaits(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// newAgent creates an agent through REST and returns its token.
func (r *gwRig) newAgent(tb testing.TB, name string) string {
	tb.Helper()
	code, _, v := r.call(tb, context.Background(), "POST", "/v1/admin/agents", gwAdminToken, `{"name":"`+name+`"}`)
	if code != http.StatusOK {
		tb.Fatalf("create agent %s: HTTP %d %v", name, code, v)
	}
	tok, _ := v["token"].(string)
	if tok == "" {
		tb.Fatalf("create agent %s: no token in %v", name, v)
	}
	return tok
}

func TestHealthAndOpenAPI(t *testing.T) {
	t.Parallel()
	notReady := errors.New("store unreachable")
	var ready error
	r := newGWRig(t, gwOptions{
		ready: func(context.Context) error { return ready },
		extra: map[string]http.Handler{"/extra": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"extra":true}`) })},
	})
	ctx := context.Background()
	if code, _, v := r.call(t, ctx, "GET", "/healthz", "", ""); code != 200 || v["status"] != "ok" {
		t.Errorf("/healthz = %d %v", code, v)
	}
	if code, _, v := r.call(t, ctx, "GET", "/readyz", "", ""); code != 200 || v["status"] != "ready" {
		t.Errorf("/readyz = %d %v", code, v)
	}
	ready = notReady
	if code, _, v := r.call(t, ctx, "GET", "/readyz", "", ""); code != 503 || v["error"] != notReady.Error() {
		t.Errorf("/readyz when not ready = %d %v, want 503 with the error", code, v)
	}
	if code, _, v := r.call(t, ctx, "GET", "/extra", "", ""); code != 200 || v["extra"] != true {
		t.Errorf("/extra = %d %v", code, v)
	}
	code, hdr, v := r.call(t, ctx, "GET", "/openapi.json", "", "")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("/openapi.json = %d %s", code, hdr.Get("Content-Type"))
	}
	if info, _ := v["info"].(map[string]any); info["version"] != "v9.9.9" || info["title"] != "Agent Hub API" {
		t.Errorf("/openapi.json info = %v, want the hub's version v9.9.9 and the title", v["info"])
	}
	paths, _ := v["paths"].(map[string]any)
	for _, p := range []string{"/v1/messages", "/v1/messages:wait", "/v1/messages:markRead", "/v1/status", "/v1/heartbeat", "/v1/admin/agents", "/v1/admin/agents/{name}:disable"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("/openapi.json has no path %s", p)
		}
	}
}

// Errors map to HTTP statuses with the domain's message in the body.
func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	r := newGWRig(t, gwOptions{cfg: func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 1, Total: 10} }})
	alice := r.newAgent(t, "alice")
	ctx := context.Background()
	tests := []struct {
		name, method, path, token, body string
		want                            int
		text                            string
	}{
		{"no token", "GET", "/v1/status", "", "", 401, "missing token"},
		{"wrong token", "GET", "/v1/status", "ahk_wrong", "", 401, "unknown or revoked token"},
		{"admin token on an agent call", "GET", "/v1/status", gwAdminToken, "", 403, "admin token"},
		{"agent token on an admin call", "GET", "/v1/admin/agents", alice, "", 403, "admin token"},
		{"unknown recipient", "POST", "/v1/messages", alice, `{"to":["ghost"],"body":"x"}`, 404, "ghost"},
		{"duplicate agent", "POST", "/v1/admin/agents", gwAdminToken, `{"name":"alice"}`, 409, "already exists"},
		{"bad name", "POST", "/v1/admin/agents", gwAdminToken, `{"name":"Alice"}`, 400, "agent name"},
		{"unknown JSON field", "POST", "/v1/messages", alice, `{"to":["alice"],"body":"x","sender":"bob"}`, 400, "sender"},
		{"malformed JSON", "POST", "/v1/messages", alice, `{"to":`, 400, ""},
		{"wrong JSON type", "POST", "/v1/messages:wait", alice, `{"timeout_seconds":"soon"}`, 400, ""},
		{"unknown path", "GET", "/v1/nope", alice, "", 404, ""},
	}
	for _, tt := range tests {
		code, _, v := r.call(t, ctx, tt.method, tt.path, tt.token, tt.body)
		msg, _ := v["message"].(string)
		if code != tt.want || !strings.Contains(msg, tt.text) {
			t.Errorf("%s: HTTP %d %q, want %d with %q", tt.name, code, msg, tt.want, tt.text)
		}
	}

	// 429 with Retry-After when the wait limit is reached.
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.call(t, waitCtx, "POST", "/v1/messages:wait", alice, `{"timeout_seconds":30}`)
	}()
	r.parked(t, 1)
	code, hdr, v := r.call(t, ctx, "POST", "/v1/messages:wait", alice, `{"timeout_seconds":30}`)
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(v["message"].(string), "limit") {
		t.Errorf("second wait = HTTP %d, Retry-After %q, %v; want 429 with Retry-After", code, hdr.Get("Retry-After"), v)
	}
	cancel()
	<-done
	r.parked(t, 0) // a client that goes away frees its waiter
}

// JSON uses the proto field names and emits every field.
func TestJSONShape(t *testing.T) {
	t.Parallel()
	r := newGWRig(t, gwOptions{})
	alice := r.newAgent(t, "alice")
	bob := r.newAgent(t, "bob")
	ctx := context.Background()
	code, _, v := r.call(t, ctx, "POST", "/v1/messages", alice, `{"to":["bob"],"channel":"#ops","body":"hi @bob"}`)
	if code != 200 {
		t.Fatalf("post: HTTP %d %v", code, v)
	}
	m, _ := v["message"].(map[string]any)
	for _, k := range []string{"id", "from", "to", "channel", "body", "mentions", "created_at", "reply_to", "kind", "unread", "mentions_you"} {
		if _, ok := m[k]; !ok {
			t.Errorf("message has no field %q: %v", k, m)
		}
	}
	if m["from"] != "alice" || m["channel"] != "#ops" || m["body"] != "hi @bob" {
		t.Errorf("message = %v", m)
	}
	id, _ := m["id"].(string)
	if _, err := time.Parse(time.RFC3339Nano, m["created_at"].(string)); err != nil {
		t.Errorf("created_at %v: %v", m["created_at"], err)
	}

	// Reply with a snake_case request field; list and wait with query and body fields.
	code, _, v = r.call(t, ctx, "POST", "/v1/messages", bob, `{"to":["alice"],"body":"re","reply_to":"`+id+`"}`)
	if code != 200 || v["message"].(map[string]any)["reply_to"] != id {
		t.Errorf("reply: HTTP %d %v", code, v)
	}
	code, _, v = r.call(t, ctx, "GET", "/v1/messages?unread_only=true&limit=1", bob, "")
	if code != 200 || len(v["messages"].([]any)) != 1 || v["cursor"] != id || v["has_more"] != false {
		t.Errorf("list: HTTP %d %v", code, v)
	}
	code, _, v = r.call(t, ctx, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":0,"after_id":"`+id+`"}`)
	if code != 200 || v["timed_out"] != true || len(v["messages"].([]any)) != 0 {
		t.Errorf("peek: HTTP %d %v", code, v)
	}
	st, _ := v["status"].(map[string]any)
	for _, k := range []string{"agent", "unread_count", "mention_count", "current_heartbeat_id", "hub_time", "online", "waiting"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status has no field %q: %v", k, st)
		}
	}
	code, _, v = r.call(t, ctx, "POST", "/v1/messages:markRead", bob, `{}`)
	if code != 200 || v["unread_count"] != "0" || v["read_up_to_id"] != id {
		t.Errorf("markRead: HTTP %d %v", code, v)
	}
}

// A wait over REST wakes on a post over REST.
func TestWaitOverREST(t *testing.T) {
	t.Parallel()
	r := newGWRig(t, gwOptions{})
	alice := r.newAgent(t, "alice")
	bob := r.newAgent(t, "bob")
	type reply struct {
		code int
		v    map[string]any
	}
	c := make(chan reply, 1)
	go func() {
		code, _, v := r.call(t, context.Background(), "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30}`)
		c <- reply{code, v}
	}()
	r.parked(t, 1)
	code, _, v := r.call(t, context.Background(), "POST", "/v1/messages", alice, `{"to":["bob"],"body":"wake"}`)
	if code != 200 {
		t.Fatalf("post: HTTP %d %v", code, v)
	}
	select {
	case got := <-c:
		msgs, _ := got.v["messages"].([]any)
		if got.code != 200 || got.v["timed_out"] != false || len(msgs) != 1 {
			t.Errorf("woken wait: HTTP %d %v", got.code, got.v)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the REST wait was not woken by the post")
	}
}
