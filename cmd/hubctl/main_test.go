package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/termtext"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// testHub is a hub running in this process on loopback port 0.
type testHub struct {
	m       *app.Main
	addr    string
	dataDir string
}

func startHub(tb testing.TB) *testHub {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	return &testHub{m: m, addr: m.GRPCAddress(), dataDir: m.DataDir}
}

// result is one hubctl run.
type result struct {
	code           int
	stdout, stderr string
}

// hubctl runs the CLI against h (nil: no hub) with env on top of an empty environment.
func (h *testHub) hubctl(tb testing.TB, env map[string]string, args ...string) result {
	tb.Helper()
	e := map[string]string{}
	if h != nil {
		e["HUB_ADDR"] = h.addr
		e["HUB_DATA_DIR"] = h.dataDir
	}
	for k, v := range env {
		e[k] = v
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return e[k] }, strings.NewReader(""), termtext.NewWriter(&out), termtext.NewWriter(&errOut))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (r result) must(tb testing.TB) result {
	tb.Helper()
	if r.code != 0 {
		tb.Fatalf("hubctl exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return r
}

func TestHelpListsGroups(t *testing.T) {
	t.Parallel()
	r := (*testHub)(nil).hubctl(t, nil, "help").must(t)
	for _, want := range []string{"Agents:", "Messages:", "Hub:", "agent add", "send", "messages", "status", "info", "-addr", "-o string"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	var h *testHub
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"agent"}, "give a subcommand"},
		{[]string{"agent", "add"}, "give the agent's NAME"},
		{[]string{"agent", "add", "--nosuchflag", "x"}, "flag provided but not defined"},
		{[]string{"-o", "yaml", "info"}, `-o "yaml": use table or json`},
		{[]string{"info", "extra"}, "info takes no arguments"},
		{[]string{"send", "hello"}, "--to"},
	}
	for _, tt := range tests {
		r := h.hubctl(t, nil, tt.args...)
		if r.code != 2 {
			t.Errorf("hubctl %q: exit %d, want 2 (stderr %s)", tt.args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr+r.stdout, tt.want) {
			t.Errorf("hubctl %q: output lacks %q:\n%s%s", tt.args, tt.want, r.stdout, r.stderr)
		}
	}
}

func TestHelpFlagExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"-h"}, {"help", "agent", "add"}, {"agent", "add", "-h"}} {
		r := (*testHub)(nil).hubctl(t, nil, args...)
		if r.code != 0 {
			t.Errorf("hubctl %q: exit %d, want 0", args, r.code)
		}
		if !strings.Contains(r.stdout+r.stderr, "Usage: hubctl") {
			t.Errorf("hubctl %q printed no usage:\n%s%s", args, r.stdout, r.stderr)
		}
	}
}

func TestUnreachableHub(t *testing.T) {
	t.Parallel()
	r := (*testHub)(nil).hubctl(t, map[string]string{"HUB_ADDR": "127.0.0.1:1", "HUB_ADMIN_TOKEN": "x"}, "info")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	if want := "cannot reach hub at 127.0.0.1:1: is it running? start it with `hub`"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
}

func TestMissingAdminToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := (*testHub)(nil).hubctl(t, map[string]string{"HUB_DATA_DIR": dir}, "agent", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "no admin token at "+dir+"/admin.token") {
		t.Errorf("exit %d, stderr %q: want the admin token path", r.code, r.stderr)
	}
}

func TestWrongTokens(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	r := h.hubctl(t, map[string]string{"HUB_ADMIN_TOKEN": "wrong"}, "info")
	if r.code != 1 || !strings.Contains(r.stderr, "refused the admin token") || !strings.Contains(r.stderr, "admin.token") {
		t.Errorf("wrong admin token: exit %d, stderr %q", r.code, r.stderr)
	}
	r = h.hubctl(t, map[string]string{"HUB_TOKEN": "wrong"}, "status")
	if r.code != 1 || !strings.Contains(r.stderr, "refused the agent token") {
		t.Errorf("wrong agent token: exit %d, stderr %q", r.code, r.stderr)
	}
	r = h.hubctl(t, nil, "status")
	if r.code != 1 || !strings.Contains(r.stderr, "HUB_TOKEN") {
		t.Errorf("no agent token: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestGlobalFlagsAnywhere(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	// Flags after the command, and --addr given on the line instead of the env.
	r := h.hubctl(t, map[string]string{"HUB_ADDR": "127.0.0.1:1"}, "info", "-o", "json", "--addr="+h.addr).must(t)
	if !strings.Contains(r.stdout, `"parked_waiters"`) {
		t.Errorf("info -o json: %s", r.stdout)
	}
}

func TestRPCErrorKeepsStatus(t *testing.T) {
	t.Parallel()
	err := error(&rpcError{err: status.Error(codes.Unimplemented, "x")})
	if got := status.Code(err); got != codes.Unimplemented {
		t.Errorf("status.Code = %v, want Unimplemented", got)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	r := h.hubctl(t, nil, "info").must(t)
	for _, want := range []string{"version:", "data dir:", h.dataDir, "parked waiters:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, r.stdout)
		}
	}
}

// agentClient dials h over gRPC and returns the AgentService client with
// a context that carries token; the connection is closed when tb ends.
func (h *testHub) agentClient(tb testing.TB, token string) (hubv1.AgentServiceClient, context.Context) {
	tb.Helper()
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return hubv1.NewAgentServiceClient(conn), metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}
