package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func httpGet(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestMetricsEndpoint: /metrics shows posts, parked waiters, the wake
// latency of a woken wait and RPC counts, in the Prometheus text format.
func TestMetricsEndpoint(t *testing.T) {
	m := relHub(t, nil)
	aliceTok := relCreateAgent(t, m, "alice")
	bobTok := relCreateAgent(t, m, "bob")
	conn := relDial(t, m)
	agent := hubv1.NewAgentServiceClient(conn)
	url := "http://" + m.HTTPAddress() + "/metrics"

	done := make(chan error, 1)
	go func() {
		_, err := agent.WaitForMessages(bearer(context.Background(), bobTok), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
		done <- err
	}()
	if !eventually(10*time.Second, func() bool { return m.Services.Core.ParkedWaits() == 1 }) {
		t.Fatal("the wait did not park")
	}
	if code, hdr, body := httpGet(t, url); code != 200 || !strings.Contains(body, "hub_parked_waiters 1") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics with one parked wait: %d %s\n%.2000s", code, hdr.Get("Content-Type"), body)
	}
	if _, err := agent.PostMessage(bearer(context.Background(), aliceTok), &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "wake up"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	adminCtx := bearer(context.Background(), relAdminToken(t, m))
	if _, err := hubv1.NewAdminServiceClient(m.Conn()).Nudge(adminCtx, &hubv1.NudgeRequest{Name: "alice", Text: "status?"}); err != nil {
		t.Fatalf("nudge: %v", err)
	}
	_, _, body := httpGet(t, url)
	for _, want := range []string{
		"hub_nudges_total 1",
		"hub_pulses_total 0",
		"hub_parked_waiters 0",
		`hub_messages_posted_total{project="default"} 1`, // nudges are counted apart
		"hub_wake_latency_seconds_count 1",
		`hub_waits_total{outcome="messages"} 1`,
		`hub_rpcs_total{code="OK",method="PostMessage",service="AgentService"} 1`,
		`hub_rpcs_total{code="OK",method="CreateAgent",service="AdminService"} 2`,
		"hub_schema_version ",
		"hub_orchestrator_ticks_total 0",
		"hub_orchestrator_leader 0", // this hub runs no orchestrator
		"hub_store_queued_writes 0",
		"hub_store_write_batches_total ",
		"hub_store_writes_total ",
		"hub_store_checkpoints_total ",
		"hub_store_checkpoint_seconds_total ",
		"process_resident_memory_bytes",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestReadyz: ready once the store answers and migrations are applied;
// healthz is plain liveness.
func TestReadyz(t *testing.T) {
	m := relHub(t, nil)
	base := "http://" + m.HTTPAddress()
	code, _, body := httpGet(t, base+"/readyz")
	var r map[string]string
	json.Unmarshal([]byte(body), &r)
	if code != 200 || r["status"] != "ready" {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if code, _, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	if m.Store.SchemaVersion() < 1 {
		t.Fatalf("schema version %d after start", m.Store.SchemaVersion())
	}
}

// TestRequestIDs: a REST client's X-Request-Id reaches the log line of its
// call and comes back; a gRPC call without one gets a generated ID in its
// response header; refused calls are logged at warn.
func TestRequestIDs(t *testing.T) {
	var logs lockedBuffer
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	tok := relCreateAgent(t, m, "alice")

	req, _ := http.NewRequest("GET", "http://"+m.HTTPAddress()+"/v1/status", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-Request-Id", "trace-abc-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") != "trace-abc-123" {
		t.Errorf("REST: HTTP %d, X-Request-Id %q; want 200 and the client's ID back", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	if !eventually(5*time.Second, func() bool {
		return strings.Contains(logs.String(), "request_id=trace-abc-123")
	}) {
		t.Errorf("no log line with the client's request ID:\n%s", logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "request_id=trace-abc-123") {
			for _, want := range []string{"level=DEBUG", "method=/hub.v1.AgentService/GetStatus", "code=OK", "agent=alice", "duration=", "peer=127.0.0.1"} {
				if !strings.Contains(line, want) {
					t.Errorf("log line %q lacks %q", line, want)
				}
			}
		}
	}

	var hdr metadata.MD
	conn := relDial(t, m)
	// A call with an agent's token to an admin method passes the header
	// check and is refused by the interceptor: it has a request ID.
	_, err = hubv1.NewAdminServiceClient(conn).ListAgents(bearer(context.Background(), tok), &hubv1.ListAgentsRequest{}, grpc.Header(&hdr))
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("ListAgents with an agent token: %v, want PermissionDenied", err)
	}
	id := hdr.Get("x-request-id")
	if len(id) != 1 || len(id[0]) != 16 {
		t.Fatalf("refused gRPC call: x-request-id header %q, want one generated ID", id)
	}
	if !eventually(5*time.Second, func() bool {
		return strings.Contains(logs.String(), "request_id="+id[0])
	}) {
		t.Fatal("the refused call was not logged")
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "request_id="+id[0]) && (!strings.Contains(line, "level=WARN") || !strings.Contains(line, "code=PermissionDenied")) {
			t.Errorf("refused call logged as %q, want WARN and PermissionDenied", line)
		}
	}
	// A call without a token is refused from its headers and logged with
	// the client's address.
	if _, err := hubv1.NewAgentServiceClient(conn).GetStatus(context.Background(), &hubv1.GetStatusRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("GetStatus without a token: %v, want Unauthenticated", err)
	}
	if !eventually(5*time.Second, func() bool {
		return strings.Contains(logs.String(), "msg=refused call=/hub.v1.AgentService/GetStatus peer=127.0.0.1:")
	}) {
		t.Errorf("the call refused from its headers was not logged with its peer:\n%s", logs.String())
	}
}
