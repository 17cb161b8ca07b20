package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// restJoin joins over REST with code and returns the HTTP status, the
// Retry-After header and the decoded body.
func restJoin(t *testing.T, m *app.Main, code, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+m.HTTPAddress()+"/v1/agents:join", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+code)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	json.Unmarshal(b, &v)
	return resp.StatusCode, resp.Header.Get("Retry-After"), v
}

// TestJoinHub registers agents with join codes over gRPC (network port)
// and REST, and checks each refusal's code and reason on both.
func TestJoinHub(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.JoinRateLimit.PerSecond = 0 })
	ctx := context.Background()
	actx := bearer(ctx, relAdminToken(t, m))
	admin := hubv1.NewAdminServiceClient(relDial(t, m))
	agent := hubv1.NewAgentServiceClient(relDial(t, m))
	relCreateAgent(t, m, "taken")

	cr, err := admin.CreateJoinCode(actx, &hubv1.CreateJoinCodeRequest{Role: "reviewer", MaxUses: 2, ExpiresInSeconds: 3600, Note: "test fleet"})
	if err != nil {
		t.Fatal(err)
	}
	code := cr.GetCode()

	// Over REST: registered, with the code's role, and its token works.
	st, _, body := restJoin(t, m, code, `{"name":"rest-agent"}`)
	if st != http.StatusOK {
		t.Fatalf("REST join: HTTP %d %v", st, body)
	}
	tok, _ := body["token"].(string)
	if role := body["agent"].(map[string]any)["role"]; role != "reviewer" || tok == "" {
		t.Errorf("REST join answered %v, want role reviewer and a token", body)
	}
	if s, err := agent.GetStatus(bearer(ctx, tok), &hubv1.GetStatusRequest{}); err != nil || s.GetStatus().GetAgent() != "rest-agent" {
		t.Errorf("the joined token: %v, %v", s, err)
	}
	// Over gRPC: name taken, then the last use, then used up.
	_, err = agent.JoinHub(bearer(ctx, code), &hubv1.JoinHubRequest{Name: "taken"})
	if status.Code(err) != codes.AlreadyExists || !strings.Contains(err.Error(), `"taken"`) {
		t.Errorf("join as a taken name: %v, want AlreadyExists naming it", err)
	}
	if _, err := agent.JoinHub(bearer(ctx, code), &hubv1.JoinHubRequest{Name: "grpc-agent"}); err != nil {
		t.Fatalf("gRPC join: %v", err)
	}
	_, err = agent.JoinHub(bearer(ctx, code), &hubv1.JoinHubRequest{Name: "third"})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "used up") {
		t.Errorf("join past the last use: %v, want FailedPrecondition used up", err)
	}
	if st, _, body := restJoin(t, m, code, `{"name":"third"}`); st != http.StatusBadRequest || !strings.Contains(body["message"].(string), "used up") {
		t.Errorf("REST join past the last use: HTTP %d %v, want 400 used up", st, body)
	}

	// Revoked, and unknown.
	cr2, err := admin.CreateJoinCode(actx, &hubv1.CreateJoinCodeRequest{MaxUses: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := admin.RevokeJoinCode(actx, &hubv1.RevokeJoinCodeRequest{Id: cr2.GetJoinCode().GetId()}); err != nil || r.GetJoinCode().GetState() != "revoked" {
		t.Fatalf("revoke: %v, %v", r, err)
	}
	_, err = agent.JoinHub(bearer(ctx, cr2.GetCode()), &hubv1.JoinHubRequest{Name: "late"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("join with a revoked code: %v, want PermissionDenied revoked", err)
	}
	if st, _, body := restJoin(t, m, cr2.GetCode(), `{"name":"late"}`); st != http.StatusForbidden {
		t.Errorf("REST join with a revoked code: HTTP %d %v, want 403", st, body)
	}
	_, err = agent.JoinHub(bearer(ctx, "ahj_"+strings.Repeat("x", 32)), &hubv1.JoinHubRequest{Name: "guess"})
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "unknown join code") {
		t.Errorf("join with an unknown code: %v, want Unauthenticated", err)
	}

	l, err := admin.ListJoinCodes(actx, &hubv1.ListJoinCodesRequest{})
	if err != nil || len(l.GetJoinCodes()) != 2 {
		t.Fatalf("list: %v, %v", l, err)
	}
	if first := l.GetJoinCodes()[1]; first.GetUses() != 2 || first.GetState() != "used_up" || first.GetNote() != "test fleet" {
		t.Errorf("the first code lists as %v, want 2 uses, used_up", first)
	}
	as, _ := admin.ListAgents(actx, &hubv1.ListAgentsRequest{})
	if n := len(as.GetAgents()); n != 3 {
		t.Errorf("%d agents, want taken, rest-agent and grpc-agent", n)
	}
}

// TestJoinRateLimit: registrations past the hub-wide budget are refused
// from their headers, over gRPC and REST; agent calls go on.
func TestJoinRateLimit(t *testing.T) {
	m := relHub(t, func(m *app.Main) { m.JoinRateLimit = admission.RateLimit{PerSecond: 0.001, Burst: 3} })
	agent := hubv1.NewAgentServiceClient(relDial(t, m))
	cr, err := hubv1.NewAdminServiceClient(m.Conn()).CreateJoinCode(bearer(context.Background(), relAdminToken(t, m)), &hubv1.CreateJoinCodeRequest{MaxUses: 10})
	if err != nil {
		t.Fatal(err)
	}
	code := cr.GetCode()
	for i := range 3 {
		if _, err := agent.JoinHub(bearer(context.Background(), code), &hubv1.JoinHubRequest{Name: fmt.Sprintf("x%d", i)}); err != nil {
			t.Fatalf("registration %d: %v, want it within the budget", i, err)
		}
	}
	_, err = agent.JoinHub(bearer(context.Background(), code), &hubv1.JoinHubRequest{Name: "x3"})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--join-rate-limit") {
		t.Errorf("registration past the budget: %v, want ResourceExhausted naming the flag", err)
	}
	st, retry, body := restJoin(t, m, code, `{"name":"x4"}`)
	if st != http.StatusTooManyRequests || retry == "" {
		t.Errorf("REST registration past the budget: HTTP %d, Retry-After %q, %v; want 429 with Retry-After", st, retry, body)
	}
	// Agent calls are not affected by the join budget.
	tok := relCreateAgent(t, m, "worker")
	if _, err := agent.GetStatus(bearer(context.Background(), tok), &hubv1.GetStatusRequest{}); err != nil {
		t.Errorf("agent call after the join budget ran out: %v", err)
	}
}

// BenchmarkJoin measures join calls over the hub's gRPC port (SQLite on
// disk, join budget off): a registration (one new agent per operation)
// and an attempt with an unknown code, refused from its headers, beside an
// agent call with an unknown token.
//
//	go test -run '^$' -bench BenchmarkJoin -benchtime 2s ./internal/app/
func BenchmarkJoin(b *testing.B) {
	m := app.NewMain()
	m.DataDir = b.TempDir()
	m.GRPCAddr, m.HTTPAddr = "127.0.0.1:0", "off"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	m.JoinRateLimit.PerSecond = 0
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		b.Fatal(err)
	}
	newCode := func() context.Context { // a code holds at most 10,000 uses
		cr, err := hubv1.NewAdminServiceClient(m.Conn()).CreateJoinCode(bearer(context.Background(), tok), &hubv1.CreateJoinCodeRequest{MaxUses: 10000})
		if err != nil {
			b.Fatal(err)
		}
		return bearer(context.Background(), cr.GetCode())
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	agent := hubv1.NewAgentServiceClient(conn)
	joined := 0 // names stay unique across the runs of -count
	var ctx context.Context
	b.Run("register", func(b *testing.B) {
		for b.Loop() {
			if joined%10000 == 0 {
				ctx = newCode()
			}
			joined++
			if _, err := agent.JoinHub(ctx, &hubv1.JoinHubRequest{Name: fmt.Sprintf("bench-%d", joined)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unknown-code", func(b *testing.B) {
		ctx := bearer(context.Background(), "ahj_"+strings.Repeat("q", 32))
		for b.Loop() {
			if _, err := agent.JoinHub(ctx, &hubv1.JoinHubRequest{Name: "x"}); status.Code(err) != codes.Unauthenticated {
				b.Fatal(err)
			}
		}
	})
	b.Run("unknown-token", func(b *testing.B) { // the refusal every other agent call gets, for comparison
		ctx := bearer(context.Background(), "ahk_"+strings.Repeat("q", 43))
		for b.Loop() {
			if _, err := agent.GetStatus(ctx, &hubv1.GetStatusRequest{}); status.Code(err) != codes.Unauthenticated {
				b.Fatal(err)
			}
		}
	})
}

// TestJoinsGoThroughAGarbageFlood: while one address sends join attempts
// with garbage codes as fast as it can, 20 agents registering at once
// from another address all get in at their first attempt: the flood
// spends its own address's budget, not everyone's.
func TestJoinsGoThroughAGarbageFlood(t *testing.T) {
	m := relHub(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cr, err := hubv1.NewAdminServiceClient(m.Conn()).CreateJoinCode(bearer(ctx, relAdminToken(t, m)), &hubv1.CreateJoinCodeRequest{MaxUses: 20, ExpiresInSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	dialFrom := func(local string) *grpc.ClientConn {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	flooder := hubv1.NewAgentServiceClient(dialFrom("127.0.0.1"))
	fleet := hubv1.NewAgentServiceClient(dialFrom("127.0.0.2"))

	floodCtx, stopFlood := context.WithCancel(ctx)
	var flood sync.WaitGroup
	var attempts atomic.Int64
	spent := make(chan struct{}) // closed at the flood's first refusal for its address's budget
	var refused sync.Once
	for range 4 {
		flood.Go(func() {
			garbage := bearer(floodCtx, "ahj_"+strings.Repeat("g", 32))
			for floodCtx.Err() == nil && attempts.Add(1) < 50_000 {
				if _, err := flooder.JoinHub(garbage, &hubv1.JoinHubRequest{Name: "flood"}); status.Code(err) == codes.ResourceExhausted {
					refused.Do(func() { close(spent) })
				}
			}
		})
	}
	select { // the flood has spent what it can
	case <-spent:
	case <-ctx.Done():
		t.Fatalf("the flood's %d garbage attempts were never refused for their address's budget", attempts.Load())
	}

	var joined atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := fleet.JoinHub(bearer(ctx, cr.GetCode()), &hubv1.JoinHubRequest{Name: fmt.Sprintf("fleet-%d", i)})
			if err != nil {
				t.Errorf("fleet-%d: %v", i, err)
				return
			}
			joined.Add(1)
		})
	}
	wg.Wait()
	stopFlood()
	flood.Wait()
	if n := joined.Load(); n != 20 {
		t.Fatalf("%d of 20 agents joined during a flood of %d garbage attempts, want 20", n, attempts.Load())
	}
	t.Logf("20 of 20 joined during a flood of %d garbage attempts from another address", attempts.Load())
}
