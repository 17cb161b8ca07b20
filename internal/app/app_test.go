package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// coreHub is a real hub (app.Main) on loopback port 0 with a temporary
// data dir, reached over its real gRPC and HTTP listeners.
type coreHub struct {
	m     *app.Main
	admin hubv1.AdminServiceClient
	agent hubv1.AgentServiceClient
	token string          // admin token
	adm   context.Context // carries the admin token
	base  string          // http://host:port
}

// startCoreHub boots a hub on dataDir ("" for a fresh one) with the default
// configuration changed by cfg; it is closed when the test ends.
func startCoreHub(tb testing.TB, dataDir string, cfg func(*hub.Config)) *coreHub {
	tb.Helper()
	m := app.NewMain()
	if dataDir == "" {
		dataDir = tb.TempDir()
	}
	m.DataDir = dataDir
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	if cfg != nil {
		cfg(&m.Config)
	}
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	token, err := m.AdminToken()
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &coreHub{
		m: m, token: token,
		admin: hubv1.NewAdminServiceClient(conn),
		agent: hubv1.NewAgentServiceClient(conn),
		adm:   coreBearer(token),
		base:  "http://" + m.HTTPAddress(),
	}
}

func coreBearer(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// newAgent creates an agent over gRPC and returns its token.
func (h *coreHub) newAgent(tb testing.TB, name string) string {
	tb.Helper()
	r, err := h.admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatalf("CreateAgent(%s): %v", name, err)
	}
	return r.GetToken()
}

// do sends an HTTP request to the hub and returns the status, the raw body
// and the body decoded as a JSON object.
func (h *coreHub) do(tb testing.TB, method, path, token, body string) (int, string, map[string]any) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	json.Unmarshal(b, &v)
	return res.StatusCode, string(b), v
}

// counts returns how many agents and messages the hub holds.
func (h *coreHub) counts(tb testing.TB) (agents, messages int) {
	tb.Helper()
	as, err := h.admin.ListAgents(h.adm, &hubv1.ListAgentsRequest{IncludeDisabled: true})
	if err != nil {
		tb.Fatal(err)
	}
	ms, err := h.agent.ListMessages(h.adm, &hubv1.ListMessagesRequest{Limit: 500})
	if err != nil {
		tb.Fatal(err)
	}
	return len(as.GetAgents()), len(ms.GetMessages())
}

// parked waits until the hub holds n parked waits.
func (h *coreHub) parked(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for h.m.Services.Core.ParkedWaits() != n {
		if time.Now().After(deadline) {
			tb.Fatalf("parked waits = %d, want %d", h.m.Services.Core.ParkedWaits(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Bad input through the real HTTP listener: the right status, a readable
// message, and nothing written.
func TestRESTBadInput(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", func(c *hub.Config) { c.MaxBodyBytes = 1 << 10 })
	alice := h.newAgent(t, "alice")
	bob := h.newAgent(t, "bob")
	if _, err := h.admin.DisableAgent(h.adm, &hubv1.DisableAgentRequest{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	h.newAgent(t, "carol")
	if _, err := h.agent.PostMessage(coreBearer(alice), &hubv1.PostMessageRequest{To: []string{"carol"}, Body: "seed"}); err != nil {
		t.Fatal(err)
	}
	agents, messages := h.counts(t)
	big := strings.Repeat("x", 1<<10+1)
	tests := []struct {
		name, method, path, token, body string
		want                            int
		text                            string
	}{
		{"agent name with capitals", "POST", "/v1/admin/agents", h.token, `{"name":"Alice"}`, 400, "agent name"},
		{"agent name with a space", "POST", "/v1/admin/agents", h.token, `{"name":"a b"}`, 400, "agent name"},
		{"agent name too long", "POST", "/v1/admin/agents", h.token, `{"name":"` + strings.Repeat("a", 64) + `"}`, 400, "agent name"},
		{"empty agent name", "POST", "/v1/admin/agents", h.token, `{"name":""}`, 400, "agent name is required"},
		{"reserved agent name", "POST", "/v1/admin/agents", h.token, `{"name":"admin"}`, 400, "reserved"},
		{"duplicate agent", "POST", "/v1/admin/agents", h.token, `{"name":"alice"}`, 409, "already exists"},
		{"unknown field on create", "POST", "/v1/admin/agents", h.token, `{"name":"dave","token":"mine"}`, 400, "token"},
		{"disable unknown agent", "POST", "/v1/admin/agents/ghost:disable", h.token, `{}`, 404, "ghost"},
		{"empty body", "POST", "/v1/messages", alice, `{"to":["carol"],"body":""}`, 400, "body is empty"},
		{"blank body", "POST", "/v1/messages", alice, `{"to":["carol"],"body":"  \n "}`, 400, "body is empty"},
		{"oversize body", "POST", "/v1/messages", alice, `{"to":["carol"],"body":"` + big + `"}`, 400, "limit is 1024 bytes"},
		{"no recipient", "POST", "/v1/messages", alice, `{"body":"x"}`, 400, "no recipient"},
		{"unknown recipient", "POST", "/v1/messages", alice, `{"to":["carol","ghost"],"body":"x"}`, 404, `no agent named "ghost"`},
		{"disabled recipient", "POST", "/v1/messages", alice, `{"to":["bob"],"body":"x"}`, 400, "disabled"},
		{"bad channel", "POST", "/v1/messages", alice, `{"channel":"general","body":"x"}`, 400, "channel"},
		{"unknown reply_to", "POST", "/v1/messages", alice, `{"to":["carol"],"body":"x","reply_to":"999999"}`, 404, "reply_to"},
		{"malformed reply_to", "POST", "/v1/messages", alice, `{"to":["carol"],"body":"x","reply_to":"first"}`, 400, "reply_to"},
		{"unknown JSON field", "POST", "/v1/messages", alice, `{"to":["carol"],"body":"x","from":"carol"}`, 400, "from"},
		{"malformed JSON", "POST", "/v1/messages", alice, `{"to":["carol"],`, 400, ""},
		{"malformed cursor", "GET", "/v1/messages?after_id=abc", alice, "", 400, "after_id"},
		{"negative cursor", "GET", "/v1/messages?after_id=-4", alice, "", 400, "after_id"},
		{"malformed limit", "GET", "/v1/messages?limit=many", alice, "", 400, ""},
		{"negative limit", "GET", "/v1/messages?limit=-1", alice, "", 400, "limit"},
		{"malformed up_to_id", "POST", "/v1/messages:markRead", alice, `{"up_to_id":"all"}`, 400, "up_to_id"},
		{"negative timeout", "POST", "/v1/messages:wait", alice, `{"timeout_seconds":-5}`, 400, "timeout_seconds"},
		{"malformed wait cursor", "POST", "/v1/messages:wait", alice, `{"timeout_seconds":1,"after_id":"x"}`, 400, "after_id"},
		{"no token", "POST", "/v1/messages", "", `{"to":["carol"],"body":"x"}`, 401, "missing token"},
		{"wrong token", "POST", "/v1/messages", "ahk_wrong", `{"to":["carol"],"body":"x"}`, 401, "unknown or revoked token"},
		{"disabled agent's token", "POST", "/v1/messages", bob, `{"to":["carol"],"body":"x"}`, 403, "disabled"},
		{"admin token as agent", "POST", "/v1/messages:markRead", h.token, `{}`, 403, "admin token"},
		{"agent token on the admin's list naming another agent", "GET", "/v1/admin/messages?agent=carol", alice, "", 403, "agent is the admin's"},
		{"agent token as admin", "POST", "/v1/admin/agents", alice, `{"name":"dave"}`, 403, "admin token"},
		{"no admin token", "GET", "/v1/admin/agents", "", "", 401, "missing admin token"},
		{"wrong admin token", "POST", "/v1/admin/agents", "ahk_wrong", `{"name":"dave"}`, 401, "unknown admin token"},
	}
	for _, tt := range tests {
		code, raw, v := h.do(t, tt.method, tt.path, tt.token, tt.body)
		msg, _ := v["message"].(string)
		if code != tt.want {
			t.Errorf("%s: HTTP %d %s, want %d", tt.name, code, raw, tt.want)
		} else if msg == "" || !strings.Contains(msg, tt.text) {
			t.Errorf("%s: message %q, want a readable message containing %q", tt.name, msg, tt.text)
		}
	}
	if a, m := h.counts(t); a != agents || m != messages {
		t.Errorf("after the refused requests: %d agents, %d messages; want %d and %d", a, m, agents, messages)
	}
	if got := h.m.Services.Core.ParkedWaits(); got != 0 {
		t.Errorf("parked waits = %d, want 0", got)
	}
}

// The REST paths and JSON of the messaging API, through the real listener.
func TestRESTMessages(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	code, _, v := h.do(t, "POST", "/v1/admin/agents", h.token, `{"name":"alice","role":"writer"}`)
	if code != 200 {
		t.Fatalf("create alice: HTTP %d %v", code, v)
	}
	alice, _ := v["token"].(string)
	if a, _ := v["agent"].(map[string]any); a["name"] != "alice" || a["role"] != "writer" || alice == "" {
		t.Errorf("create reply = %v, want the agent and its token", v)
	}
	bob := h.newAgent(t, "bob")

	code, raw, v := h.do(t, "POST", "/v1/messages", alice, `{"to":["bob"],"body":"hello @bob"}`)
	if code != 200 {
		t.Fatalf("post: HTTP %d %s", code, raw)
	}
	m, _ := v["message"].(map[string]any)
	for _, k := range []string{"id", "from", "to", "channel", "body", "mentions", "created_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("POST /v1/messages reply has no message.%s: %s", k, raw)
		}
	}
	if m["from"] != "alice" || fmt.Sprint(m["to"]) != "[bob]" || fmt.Sprint(m["mentions"]) != "[bob]" || m["body"] != "hello @bob" || m["channel"] != "" {
		t.Errorf("message = %v", m)
	}
	for _, camel := range []string{"createdAt", "replyTo", "mentionsYou"} {
		if strings.Contains(raw, camel) {
			t.Errorf("reply uses the JSON name %q, want snake_case: %s", camel, raw)
		}
	}
	id := m["id"].(string)

	code, _, v = h.do(t, "GET", "/v1/messages?unread_only=true&limit=10", bob, "")
	if msgs, _ := v["messages"].([]any); code != 200 || len(msgs) != 1 || v["cursor"] != id {
		t.Errorf("GET /v1/messages = %d %v", code, v)
	}
	code, _, v = h.do(t, "GET", "/v1/status", bob, "")
	if st, _ := v["status"].(map[string]any); code != 200 || st["unread_count"] != "1" || st["mention_count"] != "1" {
		t.Errorf("GET /v1/status = %d %v", code, v)
	}
	code, _, v = h.do(t, "POST", "/v1/heartbeat", bob, `{}`)
	if hb, _ := v["heartbeat_id"].(string); code != 200 || len(hb) != 14 {
		t.Errorf("POST /v1/heartbeat = %d %v", code, v)
	}
	code, _, v = h.do(t, "POST", "/v1/messages:markRead", bob, `{"up_to_id":"`+id+`"}`)
	if code != 200 || v["read_up_to_id"] != id || v["unread_count"] != "0" {
		t.Errorf("POST /v1/messages:markRead = %d %v", code, v)
	}
	code, _, v = h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":0}`)
	if code != 200 || v["timed_out"] != true || v["cursor"] != id {
		t.Errorf("peek = %d %v, want timed_out with cursor %s", code, v, id)
	}
	code, _, v = h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30,"after_id":"0"}`)
	if msgs, _ := v["messages"].([]any); code != 200 || v["timed_out"] != false || len(msgs) != 1 {
		t.Errorf("wait after 0 = %d %v, want the message at once", code, v)
	}
	code, _, v = h.do(t, "GET", "/v1/admin/agents", h.token, "")
	if as, _ := v["agents"].([]any); code != 200 || len(as) != 2 {
		t.Errorf("GET /v1/admin/agents = %d %v", code, v)
	}
	code, _, v = h.do(t, "POST", "/v1/admin/agents/bob:disable", h.token, `{}`)
	if a, _ := v["agent"].(map[string]any); code != 200 || a["disabled"] != true {
		t.Errorf("disable bob = %d %v", code, v)
	}
	if code, _, _ := h.do(t, "GET", "/v1/status", bob, ""); code != 403 {
		t.Errorf("status of disabled bob: HTTP %d, want 403", code)
	}
	for _, p := range []string{"/healthz", "/readyz", "/openapi.json"} {
		if code, _, _ := h.do(t, "GET", p, "", ""); code != 200 {
			t.Errorf("GET %s: HTTP %d, want 200", p, code)
		}
	}
}

// A wait over HTTP wakes on a post over gRPC; the limit answers 429.
func TestRESTWait(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 1, Total: 100} })
	alice := h.newAgent(t, "alice")
	bob := h.newAgent(t, "bob")
	type reply struct {
		code int
		v    map[string]any
	}
	c := make(chan reply, 1)
	go func() {
		code, _, v := h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30}`)
		c <- reply{code, v}
	}()
	h.parked(t, 1)
	code, raw, _ := h.do(t, "POST", "/v1/messages:wait", bob, `{"timeout_seconds":30}`)
	if code != http.StatusTooManyRequests {
		t.Errorf("a second wait past the per-agent limit: HTTP %d %s, want 429", code, raw)
	}
	p, err := h.agent.PostMessage(coreBearer(alice), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "wake"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-c:
		msgs, _ := r.v["messages"].([]any)
		if r.code != 200 || r.v["timed_out"] != false || len(msgs) != 1 || r.v["cursor"] != p.GetMessage().GetId() {
			t.Errorf("woken REST wait = %d %v", r.code, r.v)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the REST wait was not woken by a gRPC post")
	}
}

// One hub per data dir: a second one on the same dir refuses to start and
// names the first. A write to the file from outside the hub (here a second
// store on it, as another process or a manual edit would) still wakes a
// wait parked on the hub, through the fallback watcher.
func TestOutsideWriteWakesWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startCoreHub(t, dir, func(c *hub.Config) { c.PollInterval = 20 * time.Millisecond })
	second := app.NewMain()
	second.DataDir, second.GRPCAddr, second.HTTPAddr = dir, "127.0.0.1:0", "off"
	second.Logger = slog.New(slog.DiscardHandler)
	second.NoOrchestrator = true
	err := second.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in use by another hub (pid %d", os.Getpid())) {
		t.Fatalf("second hub on the same data dir: %v, want a refusal naming pid %d", err, os.Getpid())
	}

	alice := a.newAgent(t, "alice")
	bob := a.newAgent(t, "bob")
	outside, err := sqlite.Open(context.Background(), filepath.Join(dir, "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Close() })
	other := hub.NewServices(hub.NewCore(outside, hub.SystemClock{}, hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, hub.SystemClock{})))
	sender, err := other.Agents.Authenticate(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	var cursor string
	for i := range 3 {
		c := make(chan *hubv1.WaitForMessagesResponse, 1)
		errc := make(chan error, 1)
		go func() {
			r, err := a.agent.WaitForMessages(coreBearer(bob), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30), AfterId: cursor})
			c <- r
			errc <- err
		}()
		a.parked(t, 1)
		p, err := other.Messages.Post(context.Background(), sender, "", hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprint("from outside ", i)})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-c:
			if err := <-errc; err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			if len(r.GetMessages()) != 1 || r.GetMessages()[0].GetId() != hub.FormatMessageID(p.ID) {
				t.Fatalf("round %d: woken wait = %v, want message %d", i, r, p.ID)
			}
			cursor = r.GetCursor()
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the wait on the hub was not woken by a write from outside", i)
		}
	}
}

// The admin token is created once (mode 0600) and kept; data survives a
// restart; Close does not wait for parked waits to time out.
func TestRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := startCoreHub(t, dir, nil)
	fi, err := os.Stat(datadir.AdminTokenFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("admin.token mode = %v, want 0600", perm)
	}
	alice := h.newAgent(t, "alice")
	h.newAgent(t, "bob")
	p, err := h.agent.PostMessage(coreBearer(alice), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "before the restart"})
	if err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		_, err := h.agent.WaitForMessages(coreBearer(alice), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(60)})
		waitErr <- err
	}()
	h.parked(t, 1)
	closed := make(chan error, 1)
	go func() { closed <- h.m.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return with a wait parked")
	}
	select {
	case <-waitErr: // an error or a reply: either way the call ended
	case <-time.After(20 * time.Second):
		t.Fatal("the parked wait did not end when the hub closed")
	}

	h2 := startCoreHub(t, dir, nil)
	if h2.token != h.token {
		t.Error("the admin token changed across a restart")
	}
	if _, err := h2.agent.GetStatus(coreBearer(alice), &hubv1.GetStatusRequest{}); err != nil {
		t.Errorf("alice's token after the restart: %v", err)
	}
	ms, err := h2.agent.ListMessages(h2.adm, &hubv1.ListMessagesRequest{})
	if err != nil || len(ms.GetMessages()) != 1 || ms.GetMessages()[0].GetId() != p.GetMessage().GetId() {
		t.Errorf("messages after the restart = %v, %v; want the one posted before", ms, err)
	}
	if info, err := h2.admin.GetHubInfo(h2.adm, &hubv1.GetHubInfoRequest{}); err != nil || info.GetSchemaVersion() < 1 || info.GetDataDir() != dir {
		t.Errorf("GetHubInfo = %v, %v", info, err)
	}
}

// The in-process connection serves the same API with the same auth.
func TestInProcessConn(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	admin := hubv1.NewAdminServiceClient(h.m.Conn())
	if _, err := admin.CreateAgent(h.adm, &hubv1.CreateAgentRequest{Name: "alice"}); err != nil {
		t.Fatalf("CreateAgent in process: %v", err)
	}
	if _, err := admin.ListAgents(context.Background(), &hubv1.ListAgentsRequest{}); err == nil {
		t.Error("an admin call without a token succeeded in process")
	}
}
