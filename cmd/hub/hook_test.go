package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// hookHub is a real hub on loopback port 0 with agents ann and bob.
type hookHub struct {
	addr       string
	ann, bob   string // tokens
	adminToken string // the admin token's file
	annC, bobC hubv1.AgentServiceClient
}

// testHubProc is a real hub on loopback port 0, no orchestrator, no HTTP.
type testHubProc struct {
	addr       string
	adminToken string // the admin token's file
	// agent creates an agent and returns its token.
	agent func(name string) string
}

func startTestHub(tb testing.TB, mods ...func(*app.Main)) testHubProc {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	for _, mod := range mods {
		mod(m)
	}
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	adminTok, err := m.AdminToken()
	if err != nil {
		tb.Fatal(err)
	}
	admin := hubv1.NewAdminServiceClient(m.Conn())
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminTok)
	return testHubProc{addr: m.GRPCAddress(), adminToken: datadir.AdminTokenFile(m.DataDir), agent: func(name string) string {
		r, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name})
		if err != nil {
			tb.Fatal(err)
		}
		return r.GetToken()
	}}
}

func startHookHub(tb testing.TB, mods ...func(*app.Main)) *hookHub {
	tb.Helper()
	p := startTestHub(tb, mods...)
	h := &hookHub{addr: p.addr, ann: p.agent("ann"), bob: p.agent("bob"), adminToken: p.adminToken}
	h.annC, h.bobC = agentClient(tb, h.addr, h.ann), agentClient(tb, h.addr, h.bob)
	return h
}

func agentClient(tb testing.TB, addr, token string) hubv1.AgentServiceClient {
	tb.Helper()
	conn, err := mcpbridge.Dial(addr, token)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return hubv1.NewAgentServiceClient(conn)
}

// hookRun is one run of the hub binary's hook command.
type hookRun struct {
	stdout, stderr string
}

// runHookBin runs `hub hook HOST EVENT` with a recorded payload on stdin
// and fails the test unless it exits 0.
func runHookBin(tb testing.TB, addr, token, host, event, payload string) hookRun {
	tb.Helper()
	return runHookWith(tb, builtHub(tb), addr, token, host, event, payload)
}

// runHookWith is runHookBin with the binary bin: hub, or hub-hook beside it.
func runHookWith(tb testing.TB, bin, addr, token, host, event, payload string) hookRun {
	tb.Helper()
	in, err := os.ReadFile(filepath.Join("testdata", "hooks", payload))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "hook", host, event, "--timeout", "5s")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+addr, "HUB_TOKEN="+token, "HUB_TOKEN_FILE=")
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s hook %s %s: %v (a hook must always exit 0)\nstderr: %s", filepath.Base(bin), host, event, err, errb.String())
	}
	return hookRun{stdout: out.String(), stderr: errb.String()}
}

// hookOut is the JSON a hook prints.
type hookOut struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput *struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func parseHookOut(tb testing.TB, r hookRun) hookOut {
	tb.Helper()
	var o hookOut
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		tb.Fatalf("hook stdout is not one JSON object: %v\n%q", err, r.stdout)
	}
	return o
}

// contextOf returns the additional context the hook injected for event ("" if none).
func contextOf(tb testing.TB, r hookRun, event string) string {
	tb.Helper()
	if strings.TrimSpace(r.stdout) == "" || strings.TrimSpace(r.stdout) == "{}" {
		return ""
	}
	o := parseHookOut(tb, r)
	if o.HookSpecificOutput == nil {
		tb.Fatalf("hook output without hookSpecificOutput: %s", r.stdout)
	}
	if o.HookSpecificOutput.HookEventName != event {
		tb.Errorf("hookEventName = %q, want %q", o.HookSpecificOutput.HookEventName, event)
	}
	return o.HookSpecificOutput.AdditionalContext
}

func post(tb testing.TB, c hubv1.AgentServiceClient, req *hubv1.PostMessageRequest) string {
	tb.Helper()
	r, err := c.PostMessage(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	return r.GetMessage().GetId()
}

func TestHookClaudeInjectsEachMessageOnce(t *testing.T) {
	h := startHookHub(t)
	ctx := context.Background()
	start := contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "SessionStart", "claude-SessionStart.json"), "SessionStart")
	for _, want := range []string{`agent "bob"`, "not from the user", "No unread messages."} {
		if !strings.Contains(start, want) {
			t.Errorf("session start context lacks %q:\n%s", want, start)
		}
	}
	if _, err := h.bobC.JoinChannel(ctx, &hubv1.JoinChannelRequest{Channel: "#ops"}); err != nil {
		t.Fatal(err)
	}
	first := post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "please review PR 12"})
	post(t, h.annC, &hubv1.PostMessageRequest{Channel: "#ops", Body: "deploy at 17:00"})

	got := contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json"), "UserPromptSubmit")
	for _, want := range []string{"please review PR 12", "deploy at 17:00", "not the user", "[" + first + "]"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt injection lacks %q:\n%s", want, got)
		}
	}
	// Never repeated: the next hooks have nothing new to say.
	if again := runHookBin(t, h.addr, h.bob, "claude", "PostToolUse", "claude-PostToolUse.json"); again.stdout != "" || again.stderr != "" {
		t.Errorf("second injection repeated something: stdout %q stderr %q", again.stdout, again.stderr)
	}
	post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "also the migration"})
	got = contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "PostToolUse", "claude-PostToolUse.json"), "PostToolUse")
	if !strings.Contains(got, "also the migration") || strings.Contains(got, "please review PR 12") {
		t.Errorf("post-tool injection = %q, want only the new message", got)
	}
	// Nothing was marked read by the injections.
	st, err := h.bobC.GetStatus(ctx, &hubv1.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetStatus().GetUnreadCount() != 3 {
		t.Errorf("unread after injections = %d, want 3 (an injection marks nothing read)", st.GetStatus().GetUnreadCount())
	}
	start = contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "SessionStart", "claude-SessionStart.json"), "SessionStart")
	if !strings.Contains(start, "Unread: 3 messages") {
		t.Errorf("session start context = %q, want the 3 unread", start)
	}
}

func TestHookInjectionIsBounded(t *testing.T) {
	h := startHookHub(t)
	for i := range 27 {
		post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprintf("note %02d", i)})
	}
	got := contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json"), "UserPromptSubmit")
	if !strings.Contains(got, "note 00") || !strings.Contains(got, "note 19") || strings.Contains(got, "note 20") {
		t.Errorf("injection should show notes 00-19 only:\n%s", got)
	}
	if !strings.Contains(got, "7 more messages not shown here: read them with read_messages after=") {
		t.Errorf("injection lacks the line counting the 7 left out:\n%s", got)
	}
	if again := runHookBin(t, h.addr, h.bob, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json"); again.stdout != "" {
		t.Errorf("the messages passed over were injected later: %q", again.stdout)
	}
}

func TestHookClaudeStopHoldsWhileMailIsUnread(t *testing.T) {
	h := startHookHub(t)
	ctx := context.Background()
	stop := func(payload string) hookOut {
		t.Helper()
		r := runHookBin(t, h.addr, h.bob, "claude", "Stop", payload)
		if r.stdout == "" {
			return hookOut{}
		}
		return parseHookOut(t, r)
	}
	if o := stop("claude-Stop.json"); o.Decision != "" {
		t.Fatalf("stop with no mail = %+v, want it let go", o)
	}
	if _, err := h.bobC.JoinChannel(ctx, &hubv1.JoinChannelRequest{Channel: "#ops"}); err != nil {
		t.Fatal(err)
	}
	post(t, h.annC, &hubv1.PostMessageRequest{Channel: "#ops", Body: "channel chatter, no mention"})
	if o := stop("claude-Stop.json"); o.Decision != "" {
		t.Fatalf("stop with channel chatter only = %+v, want it let go", o)
	}
	dm := post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "are you done with the store?"})
	mention := post(t, h.annC, &hubv1.PostMessageRequest{Channel: "#ops", Body: "@bob can you look at the alert"})
	o := stop("claude-Stop.json")
	if o.Decision != "block" {
		t.Fatalf("stop with unread mail = %+v, want decision block", o)
	}
	for _, want := range []string{"[" + dm + "] ann (agent): are you done", "[" + mention + "] ann (agent) in #ops (mentions you)", "2 messages", "not from the user", "read_messages", "1 of at most 3"} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, o.Reason)
		}
	}
	if strings.Contains(o.Reason, "channel chatter") {
		t.Errorf("reason lists a channel message that does not mention bob:\n%s", o.Reason)
	}
	// The host continues (stop_hook_active): held twice more, then let go for good.
	for i, want := range []string{"block", "block", "", ""} {
		if got := stop("claude-Stop-active.json"); got.Decision != want {
			t.Errorf("continuing stop %d: decision %q, want %q", i+2, got.Decision, want)
		}
	}
	// A new stop (the user spoke again) starts a new count.
	if got := stop("claude-Stop.json"); got.Decision != "block" {
		t.Errorf("fresh stop with mail unread: decision %q, want block", got.Decision)
	}
	if _, err := h.bobC.MarkRead(ctx, &hubv1.MarkReadRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := stop("claude-Stop-active.json"); got.Decision != "" {
		t.Errorf("stop after mark-read = %+v, want it let go", got)
	}
}

func TestHookGeminiFormats(t *testing.T) {
	h := startHookHub(t)
	run := func(event string) hookRun {
		return runHookBin(t, h.addr, h.bob, "gemini", event, "gemini-"+event+".json")
	}
	presence := func() string {
		r, err := h.annC.ListPeers(t.Context(), &hubv1.ListPeersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.GetPeers() {
			if p.GetName() == "bob" {
				return p.GetPresence()
			}
		}
		t.Fatalf("bob is not among the peers")
		return ""
	}
	if p := presence(); p != "offline" {
		t.Fatalf("bob's presence before any call = %s, want offline", p)
	}
	// A tool use records presence: bob is active after it.
	run("AfterTool")
	if p := presence(); p != "active" {
		t.Errorf("bob's presence after his AfterTool hook = %s, want active", p)
	}
	if c := contextOf(t, run("SessionStart"), "SessionStart"); !strings.Contains(c, `agent "bob"`) {
		t.Errorf("SessionStart context = %q", c)
	}
	// Nothing to say is "{}": Gemini CLI parses stdout as JSON.
	for _, e := range []string{"BeforeAgent", "AfterTool", "AfterAgent"} {
		if r := run(e); strings.TrimSpace(r.stdout) != "{}" {
			t.Errorf("%s with nothing new printed %q, want {}", e, r.stdout)
		}
	}
	post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "ping from ann"})
	if c := contextOf(t, run("AfterTool"), "AfterTool"); !strings.Contains(c, "ping from ann") {
		t.Errorf("AfterTool context = %q", c)
	}
	if r := run("BeforeAgent"); strings.TrimSpace(r.stdout) != "{}" {
		t.Errorf("BeforeAgent repeated the message: %q", r.stdout)
	}
	o := parseHookOut(t, run("AfterAgent"))
	if o.Decision != "deny" || !strings.Contains(o.Reason, "ping from ann") {
		t.Errorf("AfterAgent with unread mail = %+v, want decision deny naming the message", o)
	}
}

func TestHookNeverBreaksTheHost(t *testing.T) {
	h := startHookHub(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close() // nothing listens there now
	cases := []struct {
		name, addr, token, host, event, payload, stdout, warn string
	}{
		// Every failure prints {} on stdout (Gemini CLI turns stderr into
		// a system message when stdout is empty; every host reads {} as
		// nothing to say).
		{"hub down", down, h.bob, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json", "{}", "not reachable"},
		{"hub down, stop", down, h.bob, "claude", "Stop", "claude-Stop.json", "{}", "not reachable"},
		{"hub down, gemini", down, h.bob, "gemini", "AfterTool", "gemini-AfterTool.json", "{}", "not reachable"},
		{"hub down, gemini session end", down, h.bob, "gemini", "SessionEnd", "gemini-SessionEnd.json", "{}", "not reachable"},
		{"token refused", h.addr, "not-a-token", "claude", "PostToolUse", "claude-PostToolUse.json", "{}", "refused the agent token"},
		{"token refused, gemini", h.addr, "not-a-token", "gemini", "BeforeAgent", "gemini-BeforeAgent.json", "{}", "refused the agent token"},
		{"no token", h.addr, "", "claude", "SessionStart", "claude-SessionStart.json", "{}", "no agent token"},
		{"no token, gemini", h.addr, "", "gemini", "SessionStart", "gemini-SessionStart.json", "{}", "no agent token"},
		{"unknown event", h.addr, h.bob, "claude", "PreCompact", "claude-Stop.json", "{}", "no hook event"},
		{"unknown event, gemini", h.addr, h.bob, "gemini", "PreCompress", "gemini-AfterTool.json", "{}", "no hook event"},
	}
	for _, c := range cases {
		r := runHookBin(t, c.addr, c.token, c.host, c.event, c.payload)
		if strings.TrimSpace(r.stdout) != c.stdout {
			t.Errorf("%s: stdout %q, want %q", c.name, r.stdout, c.stdout)
		}
		if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.Contains(r.stderr, c.warn) {
			t.Errorf("%s: stderr %q, want one line saying %q", c.name, r.stderr, c.warn)
		}
	}
	// Failures before the hook starts: bad flags, no host, an unreadable
	// token file.
	for _, args := range [][]string{
		{"hook", "gemini", "AfterTool", "--no-such-flag"},
		{"hook", "gemini"},
		{"hook", "nohost", "AfterTool"},
		{"hook", "gemini", "AfterTool", "--token-file", filepath.Join(t.TempDir(), "missing")},
	} {
		cmd := exec.Command(builtHub(t), args...)
		cmd.Env = append(os.Environ(), "HUB_ADDR="+h.addr, "HUB_TOKEN=", "HUB_TOKEN_FILE=")
		cmd.Stdin = strings.NewReader("{}")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "{}" || errb.Len() == 0 {
			t.Errorf("hub %q: %v, stdout %q, stderr %q; want exit 0, {} and a warning", args, err, out.String(), errb.String())
		}
	}
}

// TestHookGeminiHelpListsSessionEnd: hub hook -h names every Gemini event
// the hook answers.
func TestHookGeminiHelpListsSessionEnd(t *testing.T) {
	out, _ := exec.Command(builtHub(t), "hook", "-h").CombinedOutput()
	_, gemini, _ := strings.Cut(string(out), "HOST gemini:")
	gemini, _, _ = strings.Cut(gemini, "Session start says")
	for _, e := range []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"} {
		if !strings.Contains(gemini, e) {
			t.Errorf("hub hook -h lists Gemini's events as %q: %s missing", gemini, e)
		}
	}
}

// TestHookAllowsTheHubsOwnTools: a permission request for one of the hub's
// own MCP tools is allowed at once, and no person is asked.
func TestHookAllowsTheHubsOwnTools(t *testing.T) {
	h := startLoopHub(t)
	for _, payload := range []string{"claude-PermissionRequest-hub.json", "codex-PermissionRequest-hub.json"} {
		host, _, _ := strings.Cut(payload, "-")
		d := parseDecision(t, startHook(t, h.addr, h.ann, host, "PermissionRequest", payload, "--approval-wait", "30s")())
		if d.HookSpecificOutput.Decision.Behavior != "allow" {
			t.Errorf("%s: decision %+v, want allow", payload, d)
		}
	}
	list, err := h.admin.ListInbox(h.actx, &hubv1.ListInboxRequest{})
	if err != nil || len(list.GetItems()) != 0 {
		t.Errorf("inbox = %v, %v; want no person asked", list.GetItems(), err)
	}
}
