package mcpbridge_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// e2eHub is a real `hub` process.
type e2eHub struct {
	bin        string
	grpc, http string
	admin      hubv1.AdminServiceClient
	asAdmin    hubv1.AgentServiceClient // with the admin token: the calls agents and the admin both make
	adminToken string
}

var (
	buildOnce sync.Once
	hubBin    string
	buildErr  error
)

// buildHub builds cmd/hub once per test binary.
func buildHub(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hub-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		hubBin = filepath.Join(dir, "hub")
		out, err := exec.Command("go", "build", "-o", hubBin, "github.com/agenthub/hub/cmd/hub").CombinedOutput()
		if err != nil {
			buildErr = err
			hubBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build hub: %v\n%s", buildErr, hubBin)
	}
	return hubBin
}

var startedRE = regexp.MustCompile(`hub started.* grpc=(\S+) http=(\S+)`)

func startHubProcess(t *testing.T) *e2eHub {
	t.Helper()
	bin := buildHub(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--data-dir", dir, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addrs := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := startedRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addrs <- m[1:]
				sent = true
			}
		}
	}()
	var a []string
	select {
	case a = <-addrs:
	case <-time.After(30 * time.Second):
		t.Fatal("the hub did not report its addresses within 30s")
	}
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mcpbridge.Dial(a[0], "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &e2eHub{bin: bin, grpc: a[0], http: a[1], admin: hubv1.NewAdminServiceClient(conn), asAdmin: hubv1.NewAgentServiceClient(conn), adminToken: strings.TrimSpace(string(tok))}
}

func (h *e2eHub) ctx() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+h.adminToken)
}

func (h *e2eHub) createAgent(t *testing.T, name string) string {
	t.Helper()
	r, err := h.admin.CreateAgent(h.ctx(), &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatalf("create agent %s: %v", name, err)
	}
	return r.GetToken()
}

func (h *e2eHub) parked(t *testing.T) int64 {
	t.Helper()
	r, err := h.admin.GetHubInfo(h.ctx(), &hubv1.GetHubInfoRequest{})
	if err != nil {
		t.Fatalf("GetHubInfo: %v", err)
	}
	return r.GetParkedWaiters()
}

// mcpProcess starts `hub mcp` for token and connects an MCP client to it over stdio.
func (h *e2eHub) mcpProcess(t *testing.T, token string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(h.bin, "mcp")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+h.grpc, "HUB_TOKEN="+token)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start hub mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

func TestEndToEndStdioProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hub binary")
	}
	t.Parallel()
	h := startHubProcess(t)
	a, _ := h.mcpProcess(t, h.createAgent(t, "alpha"))
	b, bCmd := h.mcpProcess(t, h.createAgent(t, "beta"))

	var sa, sb mcpbridge.StatusOutput
	mustCall(t, a, "check_hub_status", nil, &sa)
	mustCall(t, b, "check_hub_status", nil, &sb)
	if sa.Agent != "alpha" || sb.Agent != "beta" {
		t.Fatalf("agents = %q, %q", sa.Agent, sb.Agent)
	}

	// B parks in its own process; A posts from another; B wakes.
	var peek mcpbridge.WaitOutput
	mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &peek)
	type woke struct {
		out mcpbridge.WaitOutput
		at  time.Time
	}
	done := make(chan woke, 1)
	go func() {
		var w mcpbridge.WaitOutput
		mustCall(t, b, "wait_for_messages", map[string]any{"after": peek.Cursor}, &w)
		done <- woke{w, time.Now()}
	}()
	eventuallyTrue(t, 10*time.Second, "beta to park", func() bool { return h.parked(t) == 1 })
	var post mcpbridge.PostMessageOutput
	posted := time.Now()
	mustCall(t, a, "post_message", map[string]any{"to": []string{"beta"}, "body": "across processes"}, &post)
	select {
	case r := <-done:
		if r.out.TimedOut || len(r.out.Messages) != 1 || r.out.Messages[0].ID != post.ID || r.out.Messages[0].From != "alpha" {
			t.Fatalf("beta woke with %+v, want alpha's message %s", r.out, post.ID)
		}
		t.Logf("stdio e2e wake-up latency (two hub mcp processes): %v", r.at.Sub(posted))
	case <-time.After(30 * time.Second):
		t.Fatal("beta did not wake within 30s of the post")
	}

	// A cancelled request frees the hub's waiter across the process boundary.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"after": post.ID}})
		errc <- err
	}()
	eventuallyTrue(t, 10*time.Second, "beta to park again", func() bool { return h.parked(t) == 1 })
	cancel()
	<-errc
	eventuallyTrue(t, 5*time.Second, "the waiter to be freed after notifications/cancelled", func() bool { return h.parked(t) == 0 })

	// A killed bridge process frees its waiter too.
	go b.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"after": post.ID}})
	eventuallyTrue(t, 10*time.Second, "beta to park a third time", func() bool { return h.parked(t) == 1 })
	bCmd.Process.Kill()
	eventuallyTrue(t, 5*time.Second, "the waiter of a killed bridge to be freed", func() bool { return h.parked(t) == 0 })
}

func TestEndToEndStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hub binary")
	}
	t.Parallel()
	h := startHubProcess(t)
	url := "http://" + h.http + "/mcp"
	a, err := httpSession(t, url, h.createAgent(t, "gamma"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := httpSession(t, url, h.createAgent(t, "delta"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var peek mcpbridge.WaitOutput
	mustCall(t, b, "wait_for_messages", map[string]any{"timeout_seconds": 0}, &peek)
	done := make(chan mcpbridge.WaitOutput, 1)
	var wokeAt time.Time
	go func() {
		var w mcpbridge.WaitOutput
		mustCall(t, b, "wait_for_messages", map[string]any{"after": peek.Cursor}, &w)
		wokeAt = time.Now()
		done <- w
	}()
	eventuallyTrue(t, 10*time.Second, "delta to park", func() bool { return h.parked(t) == 1 })
	var post mcpbridge.PostMessageOutput
	posted := time.Now()
	mustCall(t, a, "post_message", map[string]any{"to": []string{"delta"}, "body": "over streamable HTTP"}, &post)
	select {
	case w := <-done:
		if w.TimedOut || len(w.Messages) != 1 || w.Messages[0].From != "gamma" {
			t.Fatalf("delta woke with %+v", w)
		}
		t.Logf("HTTP e2e wake-up latency: %v", wokeAt.Sub(posted))
	case <-time.After(30 * time.Second):
		t.Fatal("delta did not wake within 30s of the post")
	}
	// Gamma cannot read delta's message.
	var read mcpbridge.ReadMessagesOutput
	mustCall(t, a, "read_messages", map[string]any{"all": true, "after": "0"}, &read)
	for _, m := range read.Messages {
		if m.ID == post.ID && !contains(m.To, "gamma") {
			t.Errorf("gamma read delta's message")
		}
	}
}
