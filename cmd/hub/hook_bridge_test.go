package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooksock"
)

// hubRPCs returns how many gRPC calls the hub at httpAddr has answered,
// from its own counter (hub_rpcs_total on /metrics).
func hubRPCs(t *testing.T, httpAddr string) int64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "hub_rpcs_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		n += int64(v)
	}
	if n == 0 {
		t.Fatal("the hub counted no calls: hub_rpcs_total missing from /metrics")
	}
	return n
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads it.
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

// startBridge starts the hub binary's `hub mcp` for token with an MCP
// client that calls itself Claude Code (so the bridge pushes, and follows
// the agent's messages), and returns the process and its stderr.
func startBridge(t testing.TB, addr, token string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	return startBridgeFor(t, addr, token, "claude-code")
}

// startBridgeFor starts `hub mcp` for token with an MCP client that
// gives its name as client, and returns the process and its stderr.
func startBridgeFor(t testing.TB, addr, token, client string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(builtHub(t), "mcp", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+addr, "HUB_TOKEN="+token, "HUB_TOKEN_FILE=")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("start hub mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cmd, stderr
}

// bridgeAnswers runs hooks of the agent of token until its bridge answers
// one with nothing new (the bridge must have seen a hook through the hub
// after it started following the agent).
func bridgeAnswers(tb testing.TB, addr, token string, hook func()) {
	tb.Helper()
	q := hooksock.Query{Token: token, Step: hooksock.StepInject, Event: "PostToolUse"}
	for deadline := time.Now().Add(15 * time.Second); ; hook() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rep, s, err := hooksock.Ask(ctx, hooksock.Path(addr, token), q)
		cancel()
		if err == nil {
			s.Close()
			if rep.Answer == hooksock.AnswerQuiet {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatal("the bridge did not answer a hook with nothing new within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHookAsksTheBridge runs the real hub, the real `hub mcp` of agent ann
// and the real hook as hosts run it, hub-hook (which hands what needs the
// hub to `hub hook` beside it): with the bridge following ann's messages, a tool
// use with nothing new costs the hub no call; a message arrives on the
// channel, and the hooks after it, with nothing of it to inject, are
// answered by the bridge alone still; another agent's token is refused; with the bridge
// killed (its socket file left behind) the hook asks the hub and shows
// what arrived meanwhile; a new bridge takes the stale socket over.
func TestHookAsksTheBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	rt, err := os.MkdirTemp("", "hb") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	t.Setenv("XDG_RUNTIME_DIR", rt)
	m := startHTTPHub(t, nil)
	admin := hubv1.NewAdminServiceClient(m.Conn())
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)
	token := func(name string) string {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetToken()
	}
	addr := m.GRPCAddress()
	ann, bob := token("ann"), token("bob")
	bobC := agentClient(t, addr, bob)
	parked := func(n int64) func() bool {
		return func() bool {
			r, err := admin.GetHubInfo(actx, &hubv1.GetHubInfoRequest{})
			return err == nil && r.GetParkedWaiters() == n
		}
	}
	hubHook := filepath.Join(filepath.Dir(builtHub(t)), "hub-hook")
	hook := func() hookRun {
		return runHookWith(t, hubHook, addr, ann, "claude", "PostToolUse", "claude-PostToolUse.json")
	}
	// quiet runs hooks until one costs the hub no call, and fails if none does.
	quiet := func(what string) {
		t.Helper()
		eventually(t, 10*time.Second, what, func() bool {
			before := hubRPCs(t, m.HTTPAddress())
			r := hook()
			return hubRPCs(t, m.HTTPAddress()) == before && strings.TrimSpace(r.stdout) == "" && r.stderr == ""
		})
	}

	bridge, bridgeErr := startBridge(t, addr, ann)
	sock := hooksock.Path(addr, ann)
	eventually(t, 10*time.Second, "the bridge to follow ann's messages", parked(1))
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the bridge's socket %s: %v, %v; want a 0600 socket", sock, fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's directory: %v, %v; want 0700", fi, err)
	}
	if !strings.Contains(bridgeErr.String(), "hooks ask this bridge first") {
		t.Errorf("the bridge does not say where hooks reach it; stderr:\n%s", bridgeErr)
	}

	quiet("a tool use with nothing new to cost the hub nothing")
	// Five in a row cost the hub nothing. A bridge that answers after the
	// hook's 30 ms leaves that hook to the hub, which a loaded machine can
	// make happen: three tries.
	var calls []int64
	for range 3 {
		before := hubRPCs(t, m.HTTPAddress())
		for range 5 {
			if r := hook(); strings.TrimSpace(r.stdout) != "" || r.stderr != "" {
				t.Errorf("a hook with nothing new printed %q, stderr %q", r.stdout, r.stderr)
			}
		}
		if calls = append(calls, hubRPCs(t, m.HTTPAddress())-before); calls[len(calls)-1] == 0 {
			break
		}
	}
	if calls[len(calls)-1] != 0 {
		t.Errorf("5 hooks with nothing new made %v calls to the hub in three tries, want 0; the bridge's log:\n%s", calls, bridgeErr)
	}

	// A message arrives: the channel shows it, so the next hook has
	// nothing of it to inject and the bridge answers it alone (three
	// messages, as above: a loaded machine may leave one hook to the hub).
	calls = nil
	for i := range 3 {
		id := post(t, bobC, &hubv1.PostMessageRequest{To: []string{"ann"}, Body: fmt.Sprintf("the build is green (%d)", i)})
		eventually(t, 10*time.Second, "the message in ann's context through the channel", func() bool {
			return adminReceipt(t, addr, adminTok, id, "ann").GetState() == "IN_CONTEXT"
		})
		eventually(t, 10*time.Second, "the bridge to follow ann's messages again", parked(1))
		before := hubRPCs(t, m.HTTPAddress())
		if r := hook(); strings.Contains(r.stdout, "the build is green") || r.stderr != "" {
			t.Errorf("the hook after a message the channel had shown printed %q, stderr %q", r.stdout, r.stderr)
		}
		if calls = append(calls, hubRPCs(t, m.HTTPAddress())-before); calls[i] == 0 {
			break
		}
	}
	if calls[len(calls)-1] != 0 {
		t.Errorf("the first hook after a message the channel showed made %v calls to the hub after three messages, want 0; the bridge's log:\n%s", calls, bridgeErr)
	}

	// Another agent's token: the bridge does not answer.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := hooksock.Ask(ctx, sock, hooksock.Query{Token: bob, Step: hooksock.StepInject}); !errors.Is(err, hooksock.ErrNoBridge) {
		t.Errorf("bob's token at ann's bridge: %v, want no answer", err)
	}

	// The bridge dies without a word: its socket file stays, the hook
	// asks the hub and shows what arrived meanwhile.
	if err := bridge.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("a killed bridge leaves its socket file: %v", err)
	}
	eventually(t, 10*time.Second, "the killed bridge's poll to end", parked(0))
	post(t, bobC, &hubv1.PostMessageRequest{To: []string{"ann"}, Body: "deploy at noon"})
	before := hubRPCs(t, m.HTTPAddress())
	if r := hook(); !strings.Contains(contextOf(t, r, "PostToolUse"), "deploy at noon") || r.stderr != "" {
		t.Errorf("with the bridge gone the hook showed %q, stderr %q; want the message from the hub", r.stdout, r.stderr)
	}
	if hubRPCs(t, m.HTTPAddress()) == before {
		t.Error("with the bridge gone the hook did not ask the hub")
	}

	// A new bridge takes the stale socket over.
	startBridge(t, addr, ann)
	bridgeAnswers(t, addr, ann, func() { hook() })
	quiet("a tool use with nothing new to cost the hub nothing with the new bridge")
}

// TestHookAsksTheBridgeWithoutChannel: the bridge of a client that shows
// no channel notification (here one calling itself Codex) follows the
// agent on a watch stream, so its hooks with nothing new cost the hub no
// call either; a message arrives, the next hook goes to the hub and shows
// it, and the ones after are the bridge's again.
func TestHookAsksTheBridgeWithoutChannel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	rt, err := os.MkdirTemp("", "hb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	t.Setenv("XDG_RUNTIME_DIR", rt)
	m := startHTTPHub(t, nil)
	admin := hubv1.NewAdminServiceClient(m.Conn())
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	actx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)
	token := func(name string) string {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetToken()
	}
	addr := m.GRPCAddress()
	ann, bob := token("ann"), token("bob")
	bobC := agentClient(t, addr, bob)
	hook := func() hookRun { return runHookBin(t, addr, ann, "claude", "PostToolUse", "claude-PostToolUse.json") }
	quiet := func(what string) {
		t.Helper()
		eventually(t, 10*time.Second, what, func() bool {
			before := hubRPCs(t, m.HTTPAddress())
			r := hook()
			return hubRPCs(t, m.HTTPAddress()) == before && strings.TrimSpace(r.stdout) == "" && r.stderr == ""
		})
	}

	_, bridgeErr := startBridgeFor(t, addr, ann, "codex-mcp-client")
	eventually(t, 10*time.Second, "the bridge to follow ann's messages on a watch stream", func() bool {
		r, err := admin.GetHubInfo(actx, &hubv1.GetHubInfoRequest{})
		return err == nil && r.GetParkedWaiters() == 1
	})
	quiet("a tool use with nothing new to cost the hub nothing")

	id := post(t, bobC, &hubv1.PostMessageRequest{To: []string{"ann"}, Body: "the build is green"})
	eventually(t, 10*time.Second, "the hook to go to the hub and show the message", func() bool {
		before := hubRPCs(t, m.HTTPAddress())
		r := hook()
		return hubRPCs(t, m.HTTPAddress()) > before && strings.Contains(contextOf(t, r, "PostToolUse"), "the build is green")
	})
	// The bridge took the injection and confirms what the hook printed
	// once the hook says so (the watch stream carries nothing).
	eventually(t, 10*time.Second, "the message IN_CONTEXT via hook", func() bool {
		rc := adminReceipt(t, addr, adminTok, id, "ann")
		return rc.GetState() == "IN_CONTEXT" && rc.GetVia() == "hook"
	})
	quiet("hooks after the message to be the bridge's again")
	if strings.Contains(bridgeErr.String(), "channel notification") {
		t.Errorf("the bridge of a client without channels pushed; its log:\n%s", bridgeErr)
	}
}

// approvalCalls returns how many RequestApproval calls the hub at httpAddr
// answered as calls of their own and carried by streams (its counters on
// /metrics).
func approvalCalls(t *testing.T, httpAddr string) (alone, carried int64) {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		all, stream := strings.HasPrefix(line, "hub_rpcs_total{"), strings.HasPrefix(line, "hub_stream_calls_total{")
		if !all && !stream || !strings.Contains(line, `method="RequestApproval"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if all {
			alone += int64(v)
		} else {
			alone -= int64(v)
			carried += int64(v)
		}
	}
	return alone, carried
}

// TestPermissionRequestAsksTheBridge runs the real hub, the real `hub
// mcp` of agent ann and the real hook as hosts run it (hub-hook): a
// permission request makes no call of the hook's own at the hub, the
// bridge asks on its stream, and the person's decision, allow or deny,
// reaches the host as the hook prints it without a bridge (same output,
// exit 0). The hook killed by its host while it waits ends the bridge's
// call: the approval is left to the terminal at once, not after its
// wait.
func TestPermissionRequestAsksTheBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	rt, err := os.MkdirTemp("", "hb") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	t.Setenv("XDG_RUNTIME_DIR", rt)
	m := startHTTPHub(t, nil)
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	h := &loopHub{addr: m.GRPCAddress(), admin: hubv1.NewAdminServiceClient(m.Conn()),
		actx: metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminTok)}
	r, err := h.admin.CreateAgent(h.actx, &hubv1.CreateAgentRequest{Name: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	h.ann = r.GetToken()
	in, err := os.ReadFile(filepath.Join("testdata", "hooks", "claude-PermissionRequest.json"))
	if err != nil {
		t.Fatal(err)
	}
	hubHook := filepath.Join(filepath.Dir(builtHub(t)), "hub-hook")
	// start starts hub-hook's permission request with a minute's wait
	// (--no-bridge: as without a bridge).
	start := func(args ...string) (*exec.Cmd, func() (hookRun, int)) {
		cmd := exec.Command(hubHook, append([]string{"hook", "claude", "PermissionRequest", "--approval-wait", "60s"}, args...)...)
		cmd.Env = append(os.Environ(), "HUB_ADDR="+h.addr, "HUB_TOKEN="+h.ann, "HUB_TOKEN_FILE=", "HUB_APPROVAL_WAIT=", "HUB_HOOK_BRIDGE=")
		cmd.Stdin = bytes.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, func() (hookRun, int) {
			err := cmd.Wait()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			return hookRun{stdout: out.String(), stderr: errb.String()}, cmd.ProcessState.ExitCode()
		}
	}

	_, bridgeErr := startBridge(t, h.addr, h.ann)
	eventually(t, 10*time.Second, "the bridge to follow ann's messages", func() bool {
		r, err := h.admin.GetHubInfo(h.actx, &hubv1.GetHubInfoRequest{})
		return err == nil && r.GetParkedWaiters() == 1
	})
	bridgeAnswers(t, h.addr, h.ann, func() { runHookWith(t, hubHook, h.addr, h.ann, "claude", "PostToolUse", "claude-PostToolUse.json") })

	for _, c := range []struct{ decision, message string }{{"allow", ""}, {"deny", "not on the shared runner"}} {
		decide := func() {
			it := h.openItem(t, "approval")
			if it.GetAgent() != "ann" || it.GetTool() != "Bash" || it.GetSuggestedRule() != "go test:*" {
				t.Fatalf("the open item = %v, want ann's Bash approval with the host's rule", it)
			}
			if _, err := h.admin.AnswerInboxItem(h.actx, &hubv1.AnswerInboxItemRequest{Id: it.GetId(), Decision: c.decision, Message: c.message}); err != nil {
				t.Fatal(err)
			}
		}
		alone, carried := approvalCalls(t, m.HTTPAddress())
		_, bridged := start()
		decide()
		got, exit := bridged()
		if a, c := approvalCalls(t, m.HTTPAddress()); a != alone || c != carried+1 {
			t.Errorf("the hook through the bridge: the hub answered %d approvals of their own and %d carried, want none and 1; the bridge's log:\n%s", a-alone, c-carried, bridgeErr)
		}
		_, direct := start("--no-bridge")
		decide()
		want, wantExit := direct()
		if d := parseDecision(t, got); exit != wantExit || got != want || d.HookSpecificOutput.Decision.Behavior != c.decision {
			t.Errorf("the %s through the bridge: exit %d, %+v; want exit %d and what the hook prints without a bridge, %+v", c.decision, exit, got, wantExit, want)
		}
	}

	// The host kills the hook while it waits.
	hook, wait := start()
	it := h.openItem(t, "approval")
	if err := hook.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wait()
	eventually(t, 20*time.Second, "the killed hook's approval to be left to the terminal", func() bool {
		return h.item(t, it.GetId()).GetState() == "expired"
	})
}
