package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/metadata"
)

// startHubHTTP is startHub with HTTP on (for /readyz) and an optional clock.
func startHubHTTP(tb testing.TB, clock hub.Clock) *testHub {
	tb.Helper()
	return startHubWith(tb, func(m *app.Main) {
		m.HTTPAddr = "127.0.0.1:0"
		if clock != nil {
			m.Clock = clock
		}
	})
}

// startHubWith is startHub with mod applied to the Main before Start.
func startHubWith(tb testing.TB, mod func(*app.Main)) *testHub {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	mod(m)
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return &testHub{m: m, addr: m.GRPCAddress(), dataDir: m.DataDir}
}

// doctorAgent creates an agent and returns its token.
func doctorAgent(tb testing.TB, h *testHub, name string) string {
	tb.Helper()
	tok, _ := h.m.AdminToken()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	r, err := hubv1.NewAdminServiceClient(h.m.Conn()).CreateAgent(ctx, &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatal(err)
	}
	return r.GetToken()
}

func hasLine(out, status, name, detail string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "["+status) && strings.Contains(line, name) && strings.Contains(line, detail) {
			return true
		}
	}
	return false
}

func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	h := startHubHTTP(t, nil)
	tok := doctorAgent(t, h, "alice")
	r := h.hubctl(t, map[string]string{"HUB_TOKEN": tok}, "doctor", "--http", "http://"+h.m.HTTPAddress()).must(t)
	for _, want := range [][3]string{
		{"ok", "hub reachable", "answered in"},
		{"ok", "admin token", "accepted (from " + h.dataDir},
		{"ok", "agent token", `agent "alice"`},
		{"ok", "clock skew", "this machine's"},
		{"ok", "hub state", "schema version"},
		{"ok", "readyz", "ready (store reachable, migrations applied)"},
	} {
		if !hasLine(r.stdout, want[0], want[1], want[2]) {
			t.Errorf("doctor output lacks [%s] %s … %s:\n%s", want[0], want[1], want[2], r.stdout)
		}
	}
	if strings.Contains(r.stdout, "fix:") {
		t.Errorf("a healthy hub got fixes:\n%s", r.stdout)
	}

	// -o json: the same checks, machine-readable.
	r = h.hubctl(t, nil, "doctor", "-o", "json", "--http", "http://"+h.m.HTTPAddress()).must(t)
	var rep struct {
		OK     bool          `json:"ok"`
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.OK || len(rep.Checks) < 5 {
		t.Fatalf("doctor -o json: %v %+v\n%s", err, rep, r.stdout)
	}
	for _, c := range rep.Checks {
		if c.Name == "agent token" && c.Status != checkSkip {
			t.Errorf("agent token without HUB_TOKEN: %q, want skip", c.Status)
		}
	}
}

func TestDoctorGuessesHTTP(t *testing.T) {
	t.Parallel()
	// The test hub's HTTP port is not gRPC's + 1: the guess fails, which is
	// a warning (HTTP may be off), not a failure.
	h := startHub(t)
	r := h.hubctl(t, nil, "doctor", "--timeout", "2s").must(t)
	if !hasLine(r.stdout, "warn", "readyz", "/readyz") || !strings.Contains(r.stdout, "--http URL") {
		t.Errorf("doctor with HTTP off:\n%s", r.stdout)
	}
	if u, err := guessHTTPURL("127.0.0.1:7700", false); err != nil || u != "http://127.0.0.1:7701" {
		t.Errorf("guessHTTPURL = %q, %v", u, err)
	}
	if u, _ := guessHTTPURL("[::1]:7700", true); u != "https://[::1]:7701" {
		t.Errorf("guessHTTPURL over TLS = %q", u)
	}
}

func TestDoctorUnreachable(t *testing.T) {
	t.Parallel()
	r := (*testHub)(nil).hubctl(t, map[string]string{"HUB_ADDR": "127.0.0.1:1", "HUB_ADMIN_TOKEN": "x"}, "doctor")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !hasLine(r.stdout, "fail", "hub reachable", "no answer from 127.0.0.1:1") || !strings.Contains(r.stdout, "fix: cannot reach hub at 127.0.0.1:1: is it running?") {
		t.Errorf("doctor on a closed port:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "admin token") {
		t.Errorf("doctor went on after the hub was unreachable:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "1 check(s) failed") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestDoctorBadTokens(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	tok := doctorAgent(t, h, "bob")
	adminTok, _ := h.m.AdminToken()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)
	if _, err := hubv1.NewAdminServiceClient(h.m.Conn()).RevokeToken(ctx, &hubv1.RevokeTokenRequest{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	r := h.hubctl(t, map[string]string{"HUB_ADMIN_TOKEN": "wrong", "HUB_TOKEN": tok}, "doctor", "--timeout", "2s")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stdout)
	}
	for _, want := range [][3]string{
		{"ok", "hub reachable", ""},
		{"fail", "admin token", "not this hub's admin token"},
		{"fail", "agent token", "unknown or revoked"},
		{"fail", "access", "no working token"},
		{"skip", "clock skew", "needs a working token"},
	} {
		if !hasLine(r.stdout, want[0], want[1], want[2]) {
			t.Errorf("doctor output lacks [%s] %s … %s:\n%s", want[0], want[1], want[2], r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "hubctl agent token rotate NAME") {
		t.Errorf("no fix for the revoked agent token:\n%s", r.stdout)
	}
	// The admin token given as the agent token.
	r = h.hubctl(t, map[string]string{"HUB_TOKEN": adminTok}, "doctor", "--timeout", "2s")
	if !hasLine(r.stdout, "fail", "agent token", "refused") || !strings.Contains(r.stdout, "holds the admin token") {
		t.Errorf("admin token as agent token:\n%s", r.stdout)
	}
}

func TestDoctorClockSkew(t *testing.T) {
	t.Parallel()
	h := startHubHTTP(t, hub.NewFakeClock(time.Now().Add(10*time.Minute)))
	r := h.hubctl(t, nil, "doctor", "--http", "http://"+h.m.HTTPAddress())
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stdout)
	}
	if !hasLine(r.stdout, "fail", "clock skew", "ahead of this machine's") || !strings.Contains(r.stdout, "NTP") {
		t.Errorf("doctor with the hub 10 minutes ahead:\n%s", r.stdout)
	}
	// A small skew is a warning past --max-skew.
	h2 := startHubHTTP(t, hub.NewFakeClock(time.Now().Add(-5*time.Second)))
	r = h2.hubctl(t, nil, "doctor", "--http", "http://"+h2.m.HTTPAddress(), "--max-skew", "1s").must(t)
	if !hasLine(r.stdout, "warn", "clock skew", "behind this machine's") {
		t.Errorf("doctor with the hub 5 s behind:\n%s", r.stdout)
	}
}
