package hosts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// hubBinary is the hub binary the hosts run (`hub mcp`, and through
// hub-hook beside it `hub hook`): HUB_TEST_HUB (scripts/ci-hosts.sh builds
// it and hub-hook), else both built once per run.
var hubBinary = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("HUB_TEST_HUB"); bin != "" {
		return filepath.Abs(bin)
	}
	dir, err := os.MkdirTemp("", "hosts-hub-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hub")
	for _, cmd := range []string{"hub", "hub-hook"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/agenthub/hub/cmd/"+cmd).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build cmd/%s: %v\n%s", cmd, err, out)
		}
	}
	return bin, nil
})

func builtHub(t *testing.T) string {
	t.Helper()
	bin, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// testHub is a real hub on loopback ports over a temporary data dir.
type testHub struct {
	addr, http string
	adminToken string
	admin      hubv1.AdminServiceClient
	asAdmin    hubv1.AgentServiceClient // the calls agents and the admin share, with the admin token
	actx       context.Context
}

func startHub(t *testing.T) *testHub {
	t.Helper()
	m := app.NewMain()
	m.DataDir = t.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	return &testHub{
		addr: m.GRPCAddress(), http: "http://" + m.HTTPAddress(), adminToken: tok,
		admin:   hubv1.NewAdminServiceClient(m.Conn()),
		asAdmin: hubv1.NewAgentServiceClient(m.Conn()),
		actx:    metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok),
	}
}

// agent creates an agent and returns its token and a client acting as it.
func (h *testHub) agent(t *testing.T, name string) (string, hubv1.AgentServiceClient) {
	t.Helper()
	r, err := h.admin.CreateAgent(h.actx, &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mcpbridge.Dial(h.addr, r.GetToken())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return r.GetToken(), hubv1.NewAgentServiceClient(conn)
}

// presence is an agent's presence as the admin sees it.
func (h *testHub) presence(t *testing.T, name string) string {
	t.Helper()
	r, err := h.admin.GetAgent(h.actx, &hubv1.GetAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetAgent().GetPresence()
}

// receipt is the receipt of message id for its recipient.
func (h *testHub) receipt(t *testing.T, id string) *hubv1.Receipt {
	t.Helper()
	r, err := h.asAdmin.GetMessageReceipts(h.actx, &hubv1.GetMessageReceiptsRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetReceipts()) != 1 {
		t.Fatalf("message %s has %d receipts, want 1", id, len(r.GetReceipts()))
	}
	return r.GetReceipts()[0]
}

// approvals lists the approvals in the people's inbox (all states).
func (h *testHub) approvals(t *testing.T) []*hubv1.InboxItem {
	t.Helper()
	r, err := h.admin.ListInbox(h.actx, &hubv1.ListInboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*hubv1.InboxItem
	for _, it := range r.GetItems() {
		if it.GetKind() == "approval" {
			out = append(out, it)
		}
	}
	return out
}

// answerOverREST answers the first open approval over the REST API as a
// person would from the dashboard, waiting up to a minute for it to open.
func (h *testHub) answerOverREST(t *testing.T, decision, message string) (string, error) {
	return h.answerKind(t, "approval", map[string]string{"decision": decision, "message": message})
}

// answerKind answers the first open inbox item of kind with body over
// REST, waiting up to a minute for it to open.
func (h *testHub) answerKind(t *testing.T, kind string, answer map[string]string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		r, err := h.admin.ListInbox(h.actx, &hubv1.ListInboxRequest{State: "open"})
		if err != nil {
			return "", err
		}
		var items []*hubv1.InboxItem
		for _, it := range r.GetItems() {
			if it.GetKind() == kind {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			id := items[0].GetId()
			body, _ := json.Marshal(answer)
			req, _ := http.NewRequest("POST", h.http+"/v1/admin/inbox/"+id+":answer", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+h.adminToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return id, err
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return id, fmt.Errorf("answer %s: %s: %s", id, resp.Status, b)
			}
			return id, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("no inbox item opened within a minute")
}

// setupHost runs the real `hub setup HOST` for agent token into home and
// (when project is set) the project, with extra flags.
func setupHost(t *testing.T, h *testHub, host, home, project, token string, env []string, extra ...string) string {
	t.Helper()
	args := []string{"setup", host, "--addr", h.addr, "--token", token, "--token-file", filepath.Join(home, "agent.token")}
	if project != "" {
		args = append(args, "--project", project)
	}
	args = append(args, extra...)
	if !slices.Contains(extra, "--otlp") {
		args = append(args, "--otlp", "off") // no telemetry but where a test asks
	}
	cmd := exec.Command(builtHub(t), args...)
	cmd.Env = append(baseEnv(home), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hub %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// baseEnv is a host's environment: a private HOME and none of the
// caller's hub or host variables.
func baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "XDG_CONFIG_HOME", k == "XDG_DATA_HOME", k == "XDG_CACHE_HOME", k == "XDG_STATE_HOME",
			strings.HasPrefix(k, "HUB_"), strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE"),
			strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "CODEX_"), strings.HasPrefix(k, "GEMINI_"),
			strings.HasPrefix(k, "GOOGLE_"), k == "http_proxy", k == "https_proxy", k == "HTTP_PROXY", k == "HTTPS_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
}

// hostBinary is the host's binary from the environment variable that
// names it; the test is skipped without it (scripts/ci-hosts.sh sets it
// and fails a run where a host is missing).
func hostBinary(t *testing.T, env string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		t.Skipf("%s is not set: run scripts/ci-hosts.sh, which installs the pinned hosts", env)
	}
	return bin
}

// hostRunLimit bounds one run of a host: about 3 s of CPU for Gemini CLI
// to start, which on a loaded machine (load ~30 on two cores) is half a
// minute of wall time, and a scenario's run took up to 90 s there.
const hostRunLimit = 3 * time.Minute

// runHost runs a host's command with a deadline and returns its output.
func runHost(t *testing.T, dir string, env []string, timeout time.Duration, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %v", filepath.Base(bin), timeout)
	}
	return string(out), err
}
