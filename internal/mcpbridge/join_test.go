package mcpbridge_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// TestJoinEndToEnd runs the real binary: `hub mcp --join CODE --name NAME`
// registers the agent at its first start and keeps the token in a 0600
// file; the second start uses the kept token and does not join again.
func TestJoinEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hub binary")
	}
	t.Parallel()
	h := startHubProcess(t)
	cr, err := h.admin.CreateJoinCode(h.ctx(), &hubv1.CreateJoinCodeRequest{MaxUses: 2, Role: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	config := t.TempDir()
	env := append(os.Environ(), "HUB_ADDR="+h.grpc, "XDG_CONFIG_HOME="+config, "HUB_TOKEN=", "HUB_TOKEN_FILE=")
	start := func() (string, string) {
		t.Helper()
		cmd := exec.Command(h.bin, "mcp", "--join", cr.GetCode(), "--name", "joiner")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("start hub mcp --join: %v\n%s", err, stderr.String())
		}
		var st mcpbridge.StatusOutput
		mustCall(t, cs, "check_hub_status", nil, &st)
		cs.Close()
		return st.Agent, stderr.String()
	}

	agent, log := start()
	if agent != "joiner" || !strings.Contains(log, "registered agent joiner") {
		t.Fatalf("first start: agent %q, stderr %q", agent, log)
	}
	file := filepath.Join(config, "agent-hub", "joiner.token")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("token file mode %v, want 0600", mode)
	}
	if di, _ := os.Stat(filepath.Dir(file)); di.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %v, want 0700", di.Mode().Perm())
	}
	kept, _ := os.ReadFile(file)

	agent, log = start()
	if agent != "joiner" || strings.Contains(log, "registered") {
		t.Errorf("second start: agent %q, stderr %q; want the kept token, no new registration", agent, log)
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, kept) {
		t.Error("the second start changed the token file")
	}
	l, err := h.admin.ListJoinCodes(h.ctx(), &hubv1.ListJoinCodesRequest{})
	if err != nil || len(l.GetJoinCodes()) != 1 || l.GetJoinCodes()[0].GetUses() != 1 {
		t.Errorf("join codes after two starts: %v, %v; want one use", l, err)
	}

	// A refused join stops the bridge with the hub's reason and keeps no file.
	cmd := exec.Command(h.bin, "mcp", "--join", "ahj_"+strings.Repeat("z", 32), "--name", "guesser")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unknown join code") {
		t.Errorf("join with an unknown code: %v, output %q", err, out)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("token directory holds %d entries after a refused join, want only joiner.token", len(entries))
	}
}
