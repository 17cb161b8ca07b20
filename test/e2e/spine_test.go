package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSpine drives the real binaries through the spine: agents and tokens
// with hubctl, messages with hubctl and REST, a parked long-poll woken by a
// post from another agent, the error answers, the OpenAPI document, and a
// graceful SIGTERM.
func TestSpine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := buildBinaries(t)
	h := startHub(t, bin)
	ctx := context.Background()

	// The admin token was created on first start, mode 0600.
	if fi, err := os.Stat(h.dataDir + "/admin.token"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token: %v, mode %v; want a 0600 file", err, fi.Mode().Perm())
	}
	adminToken := strings.TrimSpace(string(must(os.ReadFile(h.dataDir + "/admin.token"))))

	// Agents, through hubctl.
	addAgent := func(name string, flags ...string) string {
		t.Helper()
		args := append([]string{"agent", "add", name, "-o", "json"}, flags...)
		r := h.hubctl(t, nil, args...).must(t, args...)
		var resp struct {
			Agent struct{ Name, Role string } `json:"agent"`
			Token string                      `json:"token"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
			t.Fatalf("agent add -o json: %v\n%s", err, r.stdout)
		}
		if resp.Agent.Name != name || resp.Token == "" {
			t.Fatalf("agent add -o json = %s", r.stdout)
		}
		return resp.Token
	}
	alice := addAgent("alice", "--role", "coder")
	bob := addAgent("bob")
	if r := h.hubctl(t, nil, "agent", "add", "carol"); r.code != 0 || !strings.Contains(r.stdout, "claude mcp add hub --env HUB_TOKEN=") {
		t.Errorf("agent add (table): exit %d, stdout %q", r.code, r.stdout)
	}
	list := h.hubctl(t, nil, "agent", "list").must(t)
	for _, want := range []string{"NAME", "alice", "coder", "bob", "carol"} {
		if !strings.Contains(list.stdout, want) {
			t.Errorf("agent list lacks %q:\n%s", want, list.stdout)
		}
	}

	t.Run("hubctl send and messages", func(t *testing.T) {
		h.hubctl(t, nil, "send", "--to", "alice", "hello from admin").must(t)
		r := h.hubctl(t, nil, "messages", "-o", "json").must(t)
		var resp struct {
			Messages []struct {
				ID, From, Body string
				To             []string
			} `json:"messages"`
			Cursor string `json:"cursor"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
			t.Fatalf("messages -o json: %v\n%s", err, r.stdout)
		}
		if len(resp.Messages) == 0 {
			t.Fatalf("messages -o json: no messages\n%s", r.stdout)
		}
		last := resp.Messages[len(resp.Messages)-1]
		if last.From != "admin" || last.Body != "hello from admin" || len(last.To) != 1 || last.To[0] != "alice" || resp.Cursor != last.ID {
			t.Errorf("newest message = %+v, cursor %q; want admin → alice", last, resp.Cursor)
		}
		// alice sees it with her own token, through hubctl and REST.
		st := h.hubctl(t, []string{"HUB_TOKEN=" + alice}, "status", "-o", "json").must(t)
		if !strings.Contains(st.stdout, `"agent": "alice"`) || !strings.Contains(st.stdout, `"unread_count": "1"`) {
			t.Errorf("hubctl status as alice: %s", st.stdout)
		}
		code, body := h.call(t, ctx, "GET", "/v1/status", alice, nil)
		if code != 200 || field(body, "status", "agent") != "alice" || field(body, "status", "unread_count") != "1" {
			t.Errorf("GET /v1/status as alice = %d %v", code, body)
		}
	})

	t.Run("REST post as an agent", func(t *testing.T) {
		code, body := h.call(t, ctx, "POST", "/v1/messages", alice, map[string]any{"to": []string{"bob"}, "body": "hi bob, @carol"})
		if code != 200 {
			t.Fatalf("POST /v1/messages = %d %v", code, body)
		}
		if field(body, "message", "from") != "alice" || field(body, "message", "body") != "hi bob, @carol" {
			t.Errorf("posted message = %v; want from alice", body)
		}
		mentions, _ := body["message"].(map[string]any)["mentions"].([]any)
		if len(mentions) != 1 || mentions[0] != "carol" {
			t.Errorf("mentions = %v, want [carol]", mentions)
		}
		// A field naming another sender is not part of the API: refused, not obeyed.
		code, body = h.call(t, ctx, "POST", "/v1/messages", alice, map[string]any{"to": []string{"bob"}, "body": "x", "from": "bob"})
		if code != 400 {
			t.Errorf("POST with a from field = %d %v, want 400", code, body)
		}
	})

	t.Run("parked wait woken by another agent's post", func(t *testing.T) {
		// bob's newest message is the cursor: the wait must park.
		code, st := h.call(t, ctx, "GET", "/v1/status", bob, nil)
		if code != 200 {
			t.Fatalf("GET /v1/status as bob = %d %v", code, st)
		}
		cursor := field(st, "status", "latest_message_id")

		type waitReply struct {
			code int
			body map[string]any
			err  error
		}
		done := make(chan waitReply, 1)
		start := time.Now()
		go func() {
			code, body, err := h.do(ctx, "POST", "/v1/messages:wait", bob, map[string]any{"timeout_seconds": 50, "after_id": cursor})
			done <- waitReply{code, body, err}
		}()
		// Wait until the hub reports bob as parked, then post as alice.
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, st := h.call(t, ctx, "GET", "/v1/status", alice, nil)
			if w, _ := st["status"].(map[string]any)["waiting"].([]any); len(w) == 1 && w[0] == "bob" {
				break
			}
			select {
			case r := <-done:
				t.Fatalf("wait returned before any post: %d %v %v", r.code, r.body, r.err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("bob never showed as waiting in GET /v1/status")
			}
			time.Sleep(20 * time.Millisecond)
		}
		code, posted := h.call(t, ctx, "POST", "/v1/messages", alice, map[string]any{"to": []string{"bob"}, "body": "wake up"})
		if code != 200 {
			t.Fatalf("POST /v1/messages = %d %v", code, posted)
		}
		var r waitReply
		select {
		case r = <-done:
		case <-time.After(40 * time.Second):
			t.Fatal("the parked wait did not return after the post")
		}
		if r.err != nil || r.code != 200 {
			t.Fatalf("POST /v1/messages:wait = %d %v %v", r.code, r.body, r.err)
		}
		if r.body["timed_out"] != false {
			t.Errorf("timed_out = %v after %v, want false (woken by the post)", r.body["timed_out"], time.Since(start))
		}
		msgs, _ := r.body["messages"].([]any)
		if len(msgs) != 1 || msgs[0].(map[string]any)["body"] != "wake up" || msgs[0].(map[string]any)["from"] != "alice" {
			t.Errorf("wait messages = %v, want alice's \"wake up\"", msgs)
		}
		if want := field(posted, "message", "id"); r.body["cursor"] != want {
			t.Errorf("wait cursor = %v, want %v", r.body["cursor"], want)
		}
		// A peek with the new cursor returns at once, empty.
		code, peek := h.call(t, ctx, "POST", "/v1/messages:wait", bob, map[string]any{"timeout_seconds": 0, "after_id": r.body["cursor"]})
		if m, _ := peek["messages"].([]any); code != 200 || len(m) != 0 || peek["cursor"] != r.body["cursor"] {
			t.Errorf("peek after the cursor = %d %v; want no messages and the same cursor", code, peek)
		}
	})

	t.Run("errors over HTTP", func(t *testing.T) {
		tests := []struct {
			name, method, path, token string
			body                      any
			code                      int
			msg                       string
		}{
			{"no token", "POST", "/v1/messages", "", map[string]any{"to": []string{"bob"}, "body": "x"}, 401, "missing token"},
			{"wrong token", "GET", "/v1/status", "not-a-token", nil, 401, "unknown or revoked token"},
			{"agent token on admin call", "GET", "/v1/admin/agents", alice, nil, 403, "needs the admin token"},
			{"admin token on agent call", "POST", "/v1/heartbeat", adminToken, map[string]any{}, 403, "that agent's token"},
			{"unknown recipient", "POST", "/v1/messages", alice, map[string]any{"to": []string{"nobody"}, "body": "x"}, 404, `no agent named "nobody"`},
			{"unknown agent (admin)", "GET", "/v1/admin/agents/nobody", adminToken, nil, 404, "nobody"},
			{"empty body", "POST", "/v1/messages", alice, map[string]any{"to": []string{"bob"}, "body": ""}, 400, "body is empty"},
			{"negative timeout", "POST", "/v1/messages:wait", alice, map[string]any{"timeout_seconds": -1}, 400, "negative"},
			{"malformed cursor", "GET", "/v1/messages?after_id=abc", alice, nil, 400, "after_id"},
			{"bad agent name", "POST", "/v1/admin/agents", adminToken, map[string]any{"name": "Not Valid"}, 400, "name"},
			{"duplicate agent", "POST", "/v1/admin/agents", adminToken, map[string]any{"name": "alice"}, 409, "alice"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				code, body := h.call(t, ctx, tt.method, tt.path, tt.token, tt.body)
				if code != tt.code {
					t.Errorf("%s %s = %d %v, want %d", tt.method, tt.path, code, body, tt.code)
				}
				if msg, _ := body["message"].(string); !strings.Contains(msg, tt.msg) {
					t.Errorf("%s %s message = %q, want it to contain %q", tt.method, tt.path, msg, tt.msg)
				}
			})
		}
		// Disabled agents are refused; enabling restores them.
		h.hubctl(t, nil, "agent", "disable", "carol").must(t)
		code, body := h.call(t, ctx, "POST", "/v1/admin/agents/bob:disable", adminToken, map[string]any{})
		if code != 200 || field(body, "agent", "disabled") != "true" {
			t.Fatalf("POST /v1/admin/agents/bob:disable = %d %v", code, body)
		}
		if code, body := h.call(t, ctx, "GET", "/v1/status", bob, nil); code != 403 {
			t.Errorf("disabled bob's GET /v1/status = %d %v, want 403", code, body)
		}
		h.hubctl(t, nil, "agent", "enable", "bob").must(t)
		if code, body := h.call(t, ctx, "GET", "/v1/status", bob, nil); code != 200 {
			t.Errorf("re-enabled bob's GET /v1/status = %d %v, want 200", code, body)
		}
	})

	t.Run("openapi", func(t *testing.T) {
		code, doc := h.call(t, ctx, "GET", "/openapi.json", "", nil)
		if v, _ := doc["openapi"].(string); code != 200 || !strings.HasPrefix(v, "3.") {
			t.Fatalf("GET /openapi.json = %d, openapi %v, want 3.x", code, doc["openapi"])
		}
		paths, _ := doc["paths"].(map[string]any)
		for _, p := range []string{"/v1/messages", "/v1/messages:wait", "/v1/status", "/v1/admin/agents", "/healthz", "/mcp", "/v1/admin/stream"} {
			if _, ok := paths[p]; !ok {
				t.Errorf("OpenAPI lacks path %s", p)
			}
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		// A parked wait must not hold the shutdown up.
		go h.do(ctx, "POST", "/v1/messages:wait", alice, map[string]any{"timeout_seconds": 60, "after_id": "999999"})
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		if err := h.sigterm(t, 15*time.Second); err != nil {
			t.Fatalf("hub exited with %v after SIGTERM, want status 0\nlog:\n%s", err, h.log)
		}
		t.Logf("hub exited 0 %v after SIGTERM", time.Since(start).Round(time.Millisecond))
		r := h.hubctl(t, nil, "info")
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach hub at "+h.grpcAddr) {
			t.Errorf("hubctl info with the hub stopped: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// field returns m[k1][k2]... as a string ("" if absent); numbers and bools
// are formatted as JSON.
func field(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
