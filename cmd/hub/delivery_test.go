package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// receiptOf returns agent's receipt of message id, read with the admin
// token in the file adminTokenFile.
func receiptOf(tb testing.TB, addr, adminTokenFile, id, agent string) *hubv1.Receipt {
	tb.Helper()
	tok, err := os.ReadFile(adminTokenFile)
	if err != nil {
		tb.Fatal(err)
	}
	return adminReceipt(tb, addr, strings.TrimSpace(string(tok)), id, agent)
}

func adminReceipt(tb testing.TB, addr, adminToken, id, agent string) *hubv1.Receipt {
	tb.Helper()
	conn, err := mcpbridge.Dial(addr, adminToken)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	r, err := hubv1.NewAgentServiceClient(conn).GetMessageReceipts(context.Background(), &hubv1.GetMessageReceiptsRequest{Id: id})
	if err != nil {
		tb.Fatalf("receipts of %s: %v", id, err)
	}
	for _, rc := range r.GetReceipts() {
		if rc.GetAgent() == agent {
			return rc
		}
	}
	tb.Fatalf("message %s has no receipt for %s", id, agent)
	return nil
}

// TestHookConfirmsWhatItPrinted: a message a hook injected (or listed in a
// held stop) is in the agent's context through the hook; one whose hook
// gave up before answering, or could not write its answer (the host went
// away), is not.
func TestHookConfirmsWhatItPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	h := startHookHub(t)
	receipt := func(id string) *hubv1.Receipt { return receiptOf(t, h.addr, h.adminToken, id, "bob") }

	first := post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "please review PR 12"})
	if c := contextOf(t, runHookBin(t, h.addr, h.bob, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json"), "UserPromptSubmit"); !strings.Contains(c, "please review PR 12") {
		t.Fatalf("injected %q", c)
	}
	if r := receipt(first); r.GetState() != "IN_CONTEXT" || r.GetVia() != "hook" {
		t.Errorf("after the injection: %v, want IN_CONTEXT via hook", r)
	}

	// The host went away: the hook's answer cannot be written.
	lost := post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "written nowhere"})
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close()
	in, err := os.ReadFile(filepath.Join("testdata", "hooks", "claude-PostToolUse.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtHub(t), "hook", "claude", "PostToolUse", "--timeout", "5s")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+h.addr, "HUB_TOKEN="+h.bob, "HUB_TOKEN_FILE=")
	cmd.Stdin, cmd.Stdout = strings.NewReader(string(in)), pw
	_ = cmd.Run() // killed by SIGPIPE, or it warns: either way nothing reached a host
	pw.Close()
	if r := receipt(lost); r.GetState() != "QUEUED" || r.GetInContextAt() != nil || r.GetDeliveredAt() == nil {
		t.Errorf("answer not written: %v, want QUEUED (delivered to the hook, never in context)", r)
	}

	// A hook that gives up before it answers.
	late := post(t, h.annC, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "too late"})
	cmd = exec.Command(builtHub(t), "hook", "claude", "PostToolUse", "--timeout", "1ms")
	cmd.Env = append(os.Environ(), "HUB_ADDR="+h.addr, "HUB_TOKEN="+h.bob, "HUB_TOKEN_FILE=")
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "{}" {
		t.Fatalf("a hook past its time-out: %v, stdout %q; want exit 0 and {} (nothing to say)", err, out)
	}
	if r := receipt(late); r.GetState() != "QUEUED" || r.GetInContextAt() != nil {
		t.Errorf("hook gave up: %v, want QUEUED", r)
	}

	// The stop hook lists the unread direct messages to the model: they
	// are in its context through the hook.
	o := parseHookOut(t, runHookBin(t, h.addr, h.bob, "claude", "Stop", "claude-Stop.json"))
	if o.Decision != "block" || !strings.Contains(o.Reason, "written nowhere") {
		t.Fatalf("stop = %+v, want held naming the unread message", o)
	}
	if r := receipt(lost); r.GetState() != "IN_CONTEXT" || r.GetVia() != "hook" {
		t.Errorf("after the held stop listed it: %v, want IN_CONTEXT via hook", r)
	}
}

// TestHookSessionEndOfflineAtOnce: the SessionEnd hook (Claude Code, Gemini
// CLI) shows the agent offline at once, with its hook path closed.
func TestHookSessionEndOfflineAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary")
	}
	h := startHookHub(t)
	bob := func() *hubv1.Peer {
		r, err := h.annC.ListPeers(context.Background(), &hubv1.ListPeersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.GetPeers() {
			if p.GetName() == "bob" {
				return p
			}
		}
		t.Fatal("bob is not among ann's peers")
		return nil
	}
	for _, host := range []string{"claude", "gemini"} {
		event := map[string]string{"claude": "PostToolUse", "gemini": "AfterTool"}[host]
		runHookBin(t, h.addr, h.bob, host, event, host+"-"+event+".json")
		if p := bob(); p.GetPresence() != "active" || !p.GetReachable() {
			t.Fatalf("%s: after a tool use bob is %s, reachable %v; want active and reachable (hook)", host, p.GetPresence(), p.GetReachable())
		}
		r := runHookBin(t, h.addr, h.bob, host, "SessionEnd", host+"-SessionEnd.json")
		if want := map[string]string{"claude": "", "gemini": "{}"}[host]; strings.TrimSpace(r.stdout) != want || r.stderr != "" {
			t.Errorf("%s SessionEnd printed %q, warned %q; want %q and no warning", host, r.stdout, r.stderr, want)
		}
		if p := bob(); p.GetPresence() != "offline" || p.GetReachable() {
			t.Errorf("%s: after SessionEnd bob is %s, reachable %v; want offline at once, unreachable", host, p.GetPresence(), p.GetReachable())
		}
	}
}

// channelTap is an MCP client transport that hands the Claude Code channel
// notifications it reads to the test.
type channelTap struct {
	mcp.Transport
	mu     sync.Mutex
	events []string // each notification's content
}

func (c *channelTap) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	return &tapConn{Connection: conn, tap: c}, err
}

// seen returns the contents of the notifications read so far.
func (c *channelTap) seen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, "\n")
}

type tapConn struct {
	mcp.Connection
	tap *channelTap
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if r, ok := m.(*jsonrpc.Request); err == nil && ok && r.Method == "notifications/claude/channel" {
			var p struct{ Content string }
			json.Unmarshal(r.Params, &p)
			c.tap.mu.Lock()
			c.tap.events = append(c.tap.events, p.Content)
			c.tap.mu.Unlock()
			continue
		}
		return m, err
	}
}

// TestOneDeliveryAcrossHookChannelAndTmux: an agent reached by a channel
// push (hub mcp), a tmux sidecar (hub deliver in a real tmux pane) and its
// hooks (hub hook) gets a message once, through one path (the channel, the
// fastest), recorded in its context once; a nudge, a reminder, likewise.
func TestOneDeliveryAcrossHookChannelAndTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the stand-in agent in the pane) is not installed")
	}
	tm := newTmuxServer(t)
	m, admin, actx, ar := deliverHub(t)
	tok := ar.GetToken()
	dir := t.TempDir()
	script, ready := filepath.Join(dir, "agent.py"), filepath.Join(dir, "ready")
	write(t, script, busyThenRead)
	write(t, ready, "") // at its prompt from the start
	tm.run(t, "new-session", "-d", "-s", "agent", "-x", "220", "-y", "50", python+" "+script+" "+ready)
	startDeliver(t, m, tok, "--tmux", "agent", "--tmux-socket", tm.socket, "--expect", "python3", "--cursor-file", filepath.Join(dir, "cursor"))

	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpbridge.Run(ctx, st, m.GRPCAddress(), tok, mcpbridge.Options{Channel: true}) }()
	tap := &channelTap{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, nil).Connect(ctx, tap, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	eventually(t, 10*time.Second, "the channel push and the sidecar to park", func() bool {
		r, err := admin.GetHubInfo(actx, &hubv1.GetHubInfoRequest{})
		return err == nil && r.GetParkedWaiters() == 2
	})
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}

	check := func(what, id, text string) {
		t.Helper()
		var r *hubv1.Receipt
		eventually(t, 15*time.Second, what+" in alice's context", func() bool {
			r = adminReceipt(t, m.GRPCAddress(), adminTok, id, "alice")
			return r.GetState() == "IN_CONTEXT"
		})
		hook := runHookBin(t, m.GRPCAddress(), tok, "claude", "UserPromptSubmit", "claude-UserPromptSubmit.json")
		time.Sleep(3 * time.Second) // the sidecar's idle wait (1 s) and more
		carried := map[string]bool{
			"channel": strings.Contains(tap.seen(), text),
			"tmux":    strings.Contains(strings.Join(gotLines(tm.history(t, "agent")), "\n"), text),
			"hook":    strings.Contains(hook.stdout, text),
		}
		n := 0
		for _, c := range carried {
			if c {
				n++
			}
		}
		// The channel push, the fastest path, carries it.
		if n != 1 || !carried["channel"] || r.GetVia() != "channel" {
			t.Errorf("%s carried by %v, recorded via %q: want the channel alone", what, carried, r.GetVia())
		}
		if again := adminReceipt(t, m.GRPCAddress(), adminTok, id, "alice"); again.GetVia() != r.GetVia() || !again.GetInContextAt().AsTime().Equal(r.GetInContextAt().AsTime()) {
			t.Errorf("%s: receipt moved from %v to %v", what, r, again)
		}
	}
	pr, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "the release is tagged"})
	if err != nil {
		t.Fatal(err)
	}
	check("a message", pr.GetMessage().GetId(), "the release is tagged")
	nr, err := admin.Nudge(actx, &hubv1.NudgeRequest{Name: "alice", Text: "are you stuck on the tag?"})
	if err != nil {
		t.Fatal(err)
	}
	check("a nudge", nr.GetMessage().GetId(), "are you stuck on the tag?")
}
