package hooksock

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ask is Ask with a deadline a loaded machine meets.
func ask(path string, q Query) (Reply, *Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return Ask(ctx, path, q)
}

// shortDir returns a new directory with a path short enough for a Unix
// socket inside it.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// serve listens at path and answers every hook with rep; synced counts the
// hooks that said the hub answered them.
func serve(t *testing.T, path, token string, rep Reply) (synced chan struct{}) {
	t.Helper()
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	synced = make(chan struct{}, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ln, token, func(context.Context, Query) (Reply, func()) {
			return rep, func() { synced <- struct{}{} }
		}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return synced
}

// TestSocketIsTheUsersAlone: the directory is 0700 and the socket 0600,
// and closing the listener removes the socket.
func TestSocketIsTheUsersAlone(t *testing.T) {
	path := filepath.Join(shortDir(t), "agent-hub", "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := os.Stat(filepath.Dir(path))
	sock, _ := os.Stat(path)
	if dir.Mode().Perm() != 0o700 || sock.Mode().Perm() != 0o600 || sock.Mode().Type() != os.ModeSocket {
		t.Errorf("directory %v, socket %v: want 0700 and a 0600 socket", dir.Mode(), sock.Mode())
	}
	ln.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left after the listener closed: %v", err)
	}
}

// TestAskAndSynced: the hook gets the bridge's answer, and the bridge
// learns when the hub answered the hook it sent there.
func TestAskAndSynced(t *testing.T) {
	path := filepath.Join(shortDir(t), "agent-hub", "a.sock")
	synced := serve(t, path, "tok-ann", Reply{Answer: AnswerHub, Why: "not sure"})
	rep, s, err := ask(path, Query{Token: "tok-ann", Step: StepInject, Event: "PostToolUse"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answer != AnswerHub || rep.Why != "not sure" {
		t.Errorf("reply %+v", rep)
	}
	s.Synced()
	s.Close()
	select {
	case <-synced:
	case <-time.After(5 * time.Second):
		t.Fatal("the bridge did not learn that the hub answered the hook")
	}
}

// TestAskRefusals: another token, no bridge, a stale socket, a directory
// others can enter: the hook hears no answer (and asks the hub).
func TestAskRefusals(t *testing.T) {
	root := shortDir(t)
	path := filepath.Join(root, "agent-hub", "a.sock")
	serve(t, path, "tok-ann", Reply{Answer: AnswerQuiet})
	if _, _, err := ask(path, Query{Token: "tok-bob", Step: StepInject}); !errors.Is(err, ErrNoBridge) {
		t.Errorf("another agent's token: err %v, want ErrNoBridge", err)
	}
	if _, _, err := ask(filepath.Join(root, "agent-hub", "none.sock"), Query{Token: "tok-ann"}); !errors.Is(err, ErrNoBridge) {
		t.Errorf("no socket: err %v, want ErrNoBridge", err)
	}

	// A bridge killed leaves its socket file: the hook is refused at once,
	// and the next bridge removes the file and listens.
	stale := filepath.Join(root, "agent-hub", "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	start := time.Now()
	if _, _, err := ask(stale, Query{Token: "tok-ann"}); !errors.Is(err, ErrNoBridge) {
		t.Errorf("stale socket: err %v, want ErrNoBridge", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a stale socket held the hook %v", d)
	}
	serve(t, stale, "tok-ann", Reply{Answer: AnswerQuiet})
	if rep, s, err := ask(stale, Query{Token: "tok-ann"}); err != nil || rep.Answer != AnswerQuiet {
		t.Errorf("the bridge after a stale socket: %+v, %v", rep, err)
	} else {
		s.Close()
	}
	// A live bridge is not replaced by a second one of the same agent.
	if ln, err := Listen(stale); err == nil {
		ln.Close()
		t.Error("a second bridge took over the socket of a live one")
	}

	open := filepath.Join(root, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if ln, err := Listen(filepath.Join(open, "a.sock")); err == nil {
		ln.Close()
		t.Error("Listen took a directory others can enter")
	}
	if _, _, err := ask(filepath.Join(open, "a.sock"), Query{Token: "tok-ann"}); !errors.Is(err, ErrNoBridge) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("a directory others can enter: err %v, want ErrNoBridge naming 0700", err)
	}
}

// TestAnotherUserIsRefused: a process of another user that reaches the
// socket (here in a directory open to all) gets no answer, whatever token
// it sends: the bridge checks its peer's user.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	dir := shortDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ln, "tok-ann", func(context.Context, Query) (Reply, func()) {
			answered <- struct{}{}
			return Reply{Answer: AnswerQuiet}, nil
		}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	// The client is this test binary, copied where the other user may run it.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.v", "-test.run=^TestOtherUsersClient$")
	cmd.Env = append(os.Environ(), "HOOKSOCK_OTHER_USER="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the other user's client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "no answer") {
		t.Errorf("another user got an answer: %s", out)
	}
	select {
	case <-answered:
		t.Error("the bridge answered a process of another user")
	default:
	}
}

// TestOtherUsersClient is the client TestAnotherUserIsRefused runs as
// another user: it sends the right token and prints what it hears.
func TestOtherUsersClient(t *testing.T) {
	path := os.Getenv("HOOKSOCK_OTHER_USER")
	if path == "" {
		t.Skip("run by TestAnotherUserIsRefused")
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte(`{"token":"tok-ann","step":"inject"}` + "\n"))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 100)
	if n, _ := c.Read(b); n > 0 {
		t.Logf("answer: %s", b[:n])
		return
	}
	t.Log("no answer")
}

// TestPrintedAnswer: a hook that takes a printed answer gets the bridge's
// output whole, however long (an injection's messages), and tells the
// bridge once it printed it; a hook that does not say so (an older one)
// never takes such an answer for one it knows.
func TestPrintedAnswer(t *testing.T) {
	path := filepath.Join(shortDir(t), "agent-hub", "a.sock")
	out := `{"hookSpecificOutput":{"additionalContext":"` + strings.Repeat("news ", 4000) + `"}}` + "\n"
	printed := serve(t, path, "tok-ann", Reply{Answer: AnswerPrint, Output: out, Exit: 0})
	rep, s, err := ask(path, Query{Token: "tok-ann", Step: StepInject, Event: "PostToolUse", Print: true, Host: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answer != AnswerPrint || rep.Output != out {
		t.Fatalf("answer %q with %d bytes of output, want %q with %d", rep.Answer, len(rep.Output), AnswerPrint, len(out))
	}
	s.Synced()
	s.Close()
	select {
	case <-printed:
	case <-time.After(5 * time.Second):
		t.Fatal("the bridge did not learn that the hook printed its answer")
	}
	if _, _, err := ask(path, Query{Token: "tok-ann", Step: StepInject, Event: "PostToolUse"}); !errors.Is(err, ErrNoBridge) {
		t.Errorf("a printed answer to a hook that did not ask for one: %v, want no answer", err)
	}
}

// TestApprovalWhileTheHookWaits: a permission request's query carries the
// tool's input whole, however it escapes (64 KiB of characters JSON
// escapes); the bridge's answer runs while the hook waits, and the hook
// that waited still tells the bridge once it printed the answer; a hook
// that goes while the bridge answers (its host killed it, or it gave up)
// ends the answer's context.
func TestApprovalWhileTheHookWaits(t *testing.T) {
	path := filepath.Join(shortDir(t), "agent-hub", "a.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	queries := make(chan Query, 2)
	ended := make(chan error, 2)
	printed := make(chan struct{}, 2)
	release := make(chan struct{}, 1) // a person answers
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ln, "tok-ann", func(ctx context.Context, q Query) (Reply, func()) {
			queries <- q
			select {
			case <-ctx.Done():
				ended <- ctx.Err()
			case <-release:
			}
			return Reply{Answer: AnswerPrint, Output: "allowed\n"}, func() { printed <- struct{}{} }
		}, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { ln.Close(); <-done })

	input := `{"command":"echo ` + strings.Repeat(`<"\`, (64<<10)/3) + `"}`
	want := Approval{Tool: "Bash", Input: input, CallKey: "k1", SuggestedRule: "echo:*", WaitSeconds: 60}
	q := Query{Token: "tok-ann", Step: StepOther, Event: "PermissionRequest", Print: true, Host: "claude", Approval: &want}
	type answer struct {
		rep Reply
		s   *Session
		err error
	}
	got := make(chan answer, 1)
	go func() {
		rep, s, err := ask(path, q)
		got <- answer{rep, s, err}
	}()
	if q := <-queries; q.Approval == nil || *q.Approval != want {
		t.Fatalf("the bridge got the approval %+v, want the hook's whole", q.Approval)
	}
	release <- struct{}{}
	a := <-got
	if a.err != nil || a.rep.Answer != AnswerPrint || a.rep.Output != "allowed\n" {
		t.Fatalf("the hook got %+v, %v; want the bridge's printed answer", a.rep, a.err)
	}
	a.s.Synced()
	a.s.Close()
	select {
	case <-printed:
	case <-time.After(5 * time.Second):
		t.Fatal("the bridge did not learn that the hook printed its answer")
	}
	select {
	case err := <-ended:
		t.Fatalf("the answer's context ended (%v) though the hook waited", err)
	default:
	}

	// The hook goes while the bridge answers.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _, err := Ask(ctx, path, q)
		got <- answer{err: err}
	}()
	<-queries
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the answer's context ended with %v, want canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer's context did not end when the hook went")
	}
	if a := <-got; !errors.Is(a.err, ErrNoBridge) {
		t.Errorf("the hook that gave up got %v, want no answer", a.err)
	}
}
