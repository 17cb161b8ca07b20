package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// busyThenRead prints a line every 200 ms (a working agent) until the
// file named by its argument exists, then echoes each line it reads (an
// agent at its prompt).
const busyThenRead = `import os, sys, time
i = 0
while not os.path.exists(sys.argv[1]):
    i += 1
    print("working", i, flush=True)
    time.sleep(0.2)
print("READY", flush=True)
for line in sys.stdin:
    print("GOT:", line.rstrip("\n"), flush=True)
`

// tmuxServer is a detached tmux server on a private socket, killed when
// the test ends.
type tmuxServer struct{ socket string }

func newTmuxServer(t *testing.T) tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	s := tmuxServer{socket: fmt.Sprintf("test-deliver-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s tmuxServer) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// history is the pane's whole scrollback, wrapped lines joined.
func (s tmuxServer) history(t *testing.T, target string) string {
	return s.run(t, "capture-pane", "-p", "-J", "-S", "-", "-t", target)
}

// gotLines are the lines the pane's program read, as it echoed them.
func gotLines(history string) []string {
	var out []string
	for _, l := range strings.Split(history, "\n") {
		if strings.HasPrefix(l, "GOT: ") {
			out = append(out, l)
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %v", what, within)
		}
	}
}

// TestDeliverTmux runs the real `hub deliver` against a real hub and a
// detached tmux server: nothing is typed while the pane is busy; once it
// is idle the nudge appears in the pane, and is in the agent's context
// through tmux; after a restart the next message is typed and the first is
// not typed again; typing marks nothing read.
func TestDeliverTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux")
	}
	tm := newTmuxServer(t)
	m, admin, actx, ar := deliverHub(t)
	ctx := context.Background()

	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the stand-in agent in the pane) is not installed")
	}
	dir := t.TempDir()
	script, stop := filepath.Join(dir, "agent.py"), filepath.Join(dir, "stop")
	write(t, script, busyThenRead)
	tm.run(t, "new-session", "-d", "-s", "agent", "-x", "220", "-y", "50", python+" "+script+" "+stop)
	cursorFile := filepath.Join(dir, "alice.deliver-cursor")
	deliverArgs := []string{"--tmux", "agent", "--tmux-socket", tm.socket, "--expect", "python3", "--cursor-file", cursorFile}
	stopDeliver := func(cmd *exec.Cmd, log *syncBuffer) {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("hub deliver exited with %v:\n%s", err, log)
		}
	}

	d, log := startDeliver(t, m, ar.GetToken(), deliverArgs...)
	eventually(t, 10*time.Second, "hub deliver to start", func() bool { return strings.Contains(log.String(), "delivering") })
	nudge, err := admin.Nudge(actx, &hubv1.NudgeRequest{Name: "alice", Text: "first nudge: are you stuck?"})
	if err != nil {
		t.Fatal(err)
	}
	state := func(id string) *hubv1.Receipt {
		r, err := hubv1.NewAgentServiceClient(m.Conn()).GetMessageReceipts(actx, &hubv1.GetMessageReceiptsRequest{Id: id})
		if err != nil || len(r.GetReceipts()) != 1 {
			t.Fatalf("receipts of %s: %v, %v", id, r, err)
		}
		return r.GetReceipts()[0]
	}
	// Busy: three idle periods pass and nothing is typed.
	time.Sleep(3 * time.Second)
	if h := tm.history(t, "agent"); strings.Contains(h, "Agent Hub") {
		t.Fatalf("typed while the pane was busy:\n%s", h)
	}
	if _, err := os.Stat(cursorFile); err == nil {
		t.Error("the cursor moved past a message not typed yet")
	}
	if r := state(nudge.GetMessage().GetId()); r.GetState() != "QUEUED" {
		t.Errorf("the nudge while the pane is busy: %v, want QUEUED", r)
	}
	write(t, stop, "")
	eventually(t, 15*time.Second, "the nudge to appear in the idle pane", func() bool {
		return strings.Contains(strings.Join(gotLines(tm.history(t, "agent")), "\n"), "first nudge: are you stuck?")
	})
	got := gotLines(tm.history(t, "agent"))
	if len(got) != 1 || !strings.HasPrefix(got[0], "GOT: [Agent Hub notice for alice, typed by hub deliver, not by the user] 1 new message: (1) nudge ") {
		t.Fatalf("the pane read %q, want one framed notice", got)
	}
	eventually(t, 5*time.Second, "the cursor to be kept", func() bool { b, _ := os.ReadFile(cursorFile); return len(b) > 0 })
	eventually(t, 5*time.Second, "the paste to be confirmed", func() bool { return state(nudge.GetMessage().GetId()).GetState() == "IN_CONTEXT" })
	if r := state(nudge.GetMessage().GetId()); r.GetVia() != "tmux" {
		t.Errorf("the pasted nudge: %v, want in context via tmux", r)
	}
	stopDeliver(d, log)

	if _, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "second: the build is green"}); err != nil {
		t.Fatal(err)
	}
	d, log = startDeliver(t, m, ar.GetToken(), deliverArgs...)
	eventually(t, 15*time.Second, "the message posted while stopped to appear", func() bool {
		return strings.Contains(strings.Join(gotLines(tm.history(t, "agent")), "\n"), "second: the build is green")
	})
	stopDeliver(d, log)
	got = gotLines(tm.history(t, "agent"))
	if len(got) != 2 || strings.Contains(got[1], "first nudge") || !strings.Contains(got[1], `message 2 from admin (admin): "second: the build is green"`) {
		t.Errorf("after the restart the pane read %q: want the second message alone, the nudge not typed again", got)
	}

	conn, err := mcpbridge.Dial(m.GRPCAddress(), ar.GetToken())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := hubv1.NewAgentServiceClient(conn).GetStatus(ctx, &hubv1.GetStatusRequest{})
	if err != nil || st.GetStatus().GetUnreadCount() != 2 {
		t.Errorf("unread after typing: %v, %v; want both messages still unread", st.GetStatus().GetUnreadCount(), err)
	}
}

// deliverHub starts a hub on loopback with agent alice and returns it,
// an admin client with its context, and alice's registration.
func deliverHub(t *testing.T) (*app.Main, hubv1.AdminServiceClient, context.Context, *hubv1.CreateAgentResponse) {
	t.Helper()
	m := app.NewMain()
	m.DataDir = t.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "off"
	m.NoOrchestrator = true
	m.Logger = slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminTok)
	admin := hubv1.NewAdminServiceClient(m.Conn())
	ar, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}

	return m, admin, actx, ar
}

// startDeliver starts `hub deliver` as alice on the pane.
func startDeliver(t *testing.T, m *app.Main, token string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(builtHub(t), append([]string{"deliver", "--idle", "1s"}, args...)...)
	cmd.Env = append(os.Environ(), "HUB_ADDR="+m.GRPCAddress(), "HUB_TOKEN="+token)
	var log syncBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &log
}

// TestDeliverNeverTypesIntoAShell: a pane running a shell would run the
// typed line as a command; the deliverer waits and says why, and the
// message stays queued: never in the agent's context.
func TestDeliverNeverTypesIntoAShell(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux")
	}
	tm := newTmuxServer(t)
	m, _, actx, ar := deliverHub(t)
	tm.run(t, "new-session", "-d", "-s", "shell", "-x", "200", "-y", "40", "bash --norc --noprofile")
	_, log := startDeliver(t, m, ar.GetToken(), "--tmux", "shell", "--tmux-socket", tm.socket, "--cursor-file", filepath.Join(t.TempDir(), "c"))
	eventually(t, 10*time.Second, "hub deliver to start", func() bool { return strings.Contains(log.String(), "delivering") })
	pm, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "rm -rf nothing"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the shell warning", func() bool { return strings.Contains(log.String(), "the pane runs a shell") })
	time.Sleep(2 * time.Second) // two idle periods
	if h := tm.history(t, "shell"); strings.Contains(h, "Agent Hub") {
		t.Errorf("typed into a shell:\n%s", h)
	}
	r, err := hubv1.NewAgentServiceClient(m.Conn()).GetMessageReceipts(actx, &hubv1.GetMessageReceiptsRequest{Id: pm.GetMessage().GetId()})
	if err != nil || len(r.GetReceipts()) != 1 || r.GetReceipts()[0].GetState() != "QUEUED" || r.GetReceipts()[0].GetInContextAt() != nil {
		t.Errorf("a message the pane refused: %v, %v; want QUEUED, never in context", r.GetReceipts(), err)
	}
}
