package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hooksock"
)

// built builds hub-hook into a new directory and returns its path.
var built = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hub-hook-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hub-hook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", &buildError{out: string(out), err: err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// rig is hub-hook in a directory of its own, beside a stand-in hub that
// writes its arguments and its standard input to a file and answers as a
// hook with nothing to say would.
type rig struct {
	dir, bin string
	record   string // what the stand-in hub recorded
	env      []string
}

func newRig(t *testing.T, withHub bool) rig {
	t.Helper()
	src, err := built()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hh") // short: the bridge's socket lives below it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := rig{dir: dir, bin: filepath.Join(dir, "hub-hook"), record: filepath.Join(dir, "hub-ran")}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if withHub {
		script := "#!/bin/sh\n{ echo \"$@\"; cat; } >" + r.record + "\necho '{}'\n"
		if err := os.WriteFile(filepath.Join(dir, "hub"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.env = append(os.Environ(), "HUB_ADDR=127.0.0.1:9", "HUB_TOKEN=tok-ann", "HUB_TOKEN_FILE=", "HUB_HOOK_BRIDGE=",
		"XDG_RUNTIME_DIR="+dir, "HUB_GUARD=")
	return r
}

// run runs hub-hook with args and stdin in the directory wd ("" : the
// rig's) and returns its exit status, stdout and stderr.
func (r rig) run(t *testing.T, wd, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Env = r.env
	cmd.Dir = wd
	if wd == "" {
		cmd.Dir = r.dir
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// handedOff returns what the stand-in hub recorded ("" : it did not run).
func (r rig) handedOff(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.record)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(r.record)
	return string(b)
}

// bridge serves the agent's hook socket under the rig's runtime directory
// and answers every hook with answer.
func (r rig) bridge(t *testing.T, answer string) {
	t.Helper()
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go hooksock.Serve(ln, "tok-ann", func(context.Context, hooksock.Query) (hooksock.Reply, func()) {
		return hooksock.Reply{Answer: answer}, nil
	}, slog.New(slog.DiscardHandler))
}

const postToolUse = `{"hook_event_name":"PostToolUse","session_id":"s1","tool_name":"Bash","tool_input":{"command":"true"}}`

// TestToolUseWithNothingNewStaysHere: the bridge says nothing is new, and
// hub-hook answers the tool use itself (Gemini CLI's quiet answer is {},
// Claude Code's nothing) without running the hub. A bridge slower than
// hooksock.ConnectTimeout counts as none (the hook then goes to the hub),
// which a loaded machine can make happen: a run is tried a few times.
func TestToolUseWithNothingNewStaysHere(t *testing.T) {
	r := newRig(t, true)
	r.bridge(t, hooksock.AnswerQuiet)
	for _, c := range []struct{ host, event, out string }{
		{"claude", "PostToolUse", ""},
		{"gemini", "AfterTool", "{}\n"},
		{"codex", "UserPromptSubmit", ""},
		{"claude", "PostToolUseFailure", ""},
		{"gemini", "BeforeAgent", "{}\n"},
	} {
		var code int
		var stdout, stderr, hub string
		for try := 0; try < 5; try++ {
			code, stdout, stderr = r.run(t, "", postToolUse, "hook", c.host, c.event)
			if hub = r.handedOff(t); hub == "" {
				break
			}
		}
		if code != 0 || stdout != c.out || stderr != "" || hub != "" {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q, the hub got %q; want 0, %q, nothing on stderr and no hub", c.host, c.event, code, stdout, stderr, hub, c.out)
		}
	}
}

// TestEverythingElseGoesToTheHub: something new at the bridge, no bridge,
// the bridge turned off, and every event but a tool use or a prompt run
// the hub beside hub-hook with the same arguments and the host's input
// whole.
func TestEverythingElseGoesToTheHub(t *testing.T) {
	r := newRig(t, true)
	for _, args := range [][]string{
		{"hook", "claude", "PostToolUse"},                       // no bridge
		{"hook", "claude", "PostToolUse", "--no-bridge"},        // turned off
		{"hook", "claude", "Stop", "--timeout", "1s"},           // not a tool use
		{"hook", "codex", "PermissionRequest"},                  // a person's answer
		{"hook", "gemini", "SessionStart", "--addr", "[::1]:9"}, // another hub
	} {
		code, stdout, stderr := r.run(t, "", postToolUse, args...)
		want := strings.Join(args, " ") + "\n" + postToolUse
		if got := r.handedOff(t); code != 0 || got != want || stdout != "{}\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, the hub got %q; want 0 and the hub run with %q", args, code, stdout, stderr, got, want)
		}
	}
	r.bridge(t, hooksock.AnswerHub)
	r.run(t, "", postToolUse, "hook", "gemini", "AfterTool")
	if got, want := r.handedOff(t), "hook gemini AfterTool\n"+postToolUse; got != want {
		t.Errorf("with something new at the bridge the hub got %q; want %q", got, want)
	}
}

// TestHookFailuresNeverBreakTheHost: bad command lines are answered here
// as hub hook answers them, and a hub-hook with no hub beside it prints {}
// and one warning, exit 0.
func TestHookFailuresNeverBreakTheHost(t *testing.T) {
	r := newRig(t, true)
	for _, c := range []struct {
		args []string
		warn string
	}{
		{[]string{"hook", "claude"}, "want HOST EVENT"},
		{[]string{"hook", "vim", "Stop"}, `unknown host "vim" (known: claude, codex, gemini)`},
		{[]string{"hook", "claude", "Stop", "--bogus"}, "flag provided but not defined"},
	} {
		code, stdout, stderr := r.run(t, "", "", c.args...)
		if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, "hub hook: warning: "+c.warn) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0, {} and a warning %q", c.args, code, stdout, stderr, c.warn)
		}
		if got := r.handedOff(t); got != "" {
			t.Errorf("%q: the hub ran (%q)", c.args, got)
		}
	}
	alone := newRig(t, false)
	code, stdout, stderr := alone.run(t, "", postToolUse, "hook", "claude", "PostToolUse")
	if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, "cannot run the hub binary beside hub-hook") || !strings.Contains(stderr, "nothing injected") {
		t.Errorf("no hub beside: exit %d, stdout %q, stderr %q; want 0, {} and a warning naming the missing hub", code, stdout, stderr)
	}
}

// TestGuardCheckWithNothingStagedStaysHere: in a repository with nothing
// staged, or with the guard turned off, hub-hook allows the commit
// itself; with paths staged it runs `hub guard check`; with no hub beside
// it the commit goes through with a warning, as with a hub down.
func TestGuardCheckWithNothingStagedStaysHere(t *testing.T) {
	r := newRig(t, true)
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	if code, _, stderr := r.run(t, repo, "", "guard", "check"); code != 0 || stderr != "" || r.handedOff(t) != "" {
		t.Errorf("nothing staged: exit %d, stderr %q, or the hub ran; want 0 and nothing asked", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.go")
	if code, _, _ := r.run(t, repo, "", "guard", "check"); code != 0 || r.handedOff(t) != "guard check --staged -- a.go\n" {
		t.Errorf("a.go staged: exit %d; want the hub's guard check run, handed the staged path", code)
	}
	if code, _, _ := r.run(t, repo, "", "guard", "check", "--timeout", "5s"); code != 0 || r.handedOff(t) != "guard check --timeout 5s\n" {
		t.Errorf("a check with flags: exit %d; want the hub's guard check run with them", code)
	}
	if code, _, _ := r.run(t, repo, "", "guard", "install"); code != 0 || r.handedOff(t) != "guard install\n" {
		t.Errorf("guard install: exit %d; want the hub's guard install run", code)
	}
	r.env = append(r.env, "HUB_GUARD=off")
	if code, _, _ := r.run(t, repo, "", "guard", "check"); code != 0 || r.handedOff(t) != "" {
		t.Errorf("HUB_GUARD=off: exit %d, or the hub ran; want 0 and nothing asked", code)
	}
	alone := newRig(t, false)
	code, _, stderr := alone.run(t, repo, "", "guard", "check")
	if code != 0 || !strings.Contains(stderr, "hub guard: warning: cannot run the hub binary beside hub-hook") || !strings.Contains(stderr, "commit allowed") {
		t.Errorf("no hub beside: exit %d, stderr %q; want 0 and a warning", code, stderr)
	}
}

// TestGuardInTheCommitsHook: as git's pre-commit hook, hub-hook settles
// a commit with nothing staged from the index, starting neither git nor
// the hub; a commit with paths staged (git commit -a's own index too)
// asks git once, and the hub gets the paths, renames' both.
func TestGuardInTheCommitsHook(t *testing.T) {
	r := newRig(t, true)
	repo := t.TempDir()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	// A git in front of the real one that notes each run of the hook's.
	bin := t.TempDir()
	gitRan := filepath.Join(bin, "ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >>"+gitRan+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command(real, args...)
		cmd.Dir = repo
		cmd.Env = append(r.env, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", ".")
	hook := "#!/bin/sh\nPATH=" + bin + ":$PATH exec " + r.bin + " guard check\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	ranGit := func() string {
		b, _ := os.ReadFile(gitRan)
		os.Remove(gitRan)
		return string(b)
	}
	write("a.go", "package a\n")
	write("b.go", "package b\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	if got, ran := r.handedOff(t), ranGit(); got != "guard check --staged -- a.go b.go\n" || ran != "diff --cached --name-only --no-renames -z\n" {
		t.Errorf("a first commit of two files: the hub ran %q, git %q; want git asked once and the hub handed both paths", got, ran)
	}
	git("commit", "-q", "--allow-empty", "-m", "empty")
	if got, ran := r.handedOff(t), ranGit(); got != "" || ran != "" {
		t.Errorf("an empty commit: the hub ran %q, git %q; want neither", got, ran)
	}
	write("a.go", "package a // changed\n")
	git("commit", "-q", "-a", "-m", "all")
	if got, ran := r.handedOff(t), ranGit(); got != "guard check --staged -- a.go\n" || ran != "diff --cached --name-only --no-renames -z\n" {
		t.Errorf("git commit -a: the hub ran %q, git %q; want git asked once and the hub handed a.go", got, ran)
	}
	git("mv", "b.go", "c.go")
	git("commit", "-q", "-m", "rename")
	if got := r.handedOff(t); got != "guard check --staged -- b.go c.go\n" {
		t.Errorf("a rename: the hub ran %q; want it handed the path left and the path made", got)
	}
	ranGit()
	git("rm", "-q", "a.go")
	git("commit", "-q", "-m", "delete")
	if got, ran := r.handedOff(t), ranGit(); got != "guard check --staged -- a.go\n" || ran != "diff --cached --name-only --no-renames -z\n" {
		t.Errorf("a deletion: the hub ran %q, git %q; want git asked once and the hub handed a.go", got, ran)
	}
}

// TestTheRealHubAnswersWhatIsHandedOff: beside the real hub binary, a tool
// use with no bridge reaches `hub hook`, which says the hub at the address
// does not answer, as it does when a host runs it directly.
func TestTheRealHubAnswersWhatIsHandedOff(t *testing.T) {
	r := newRig(t, false)
	if out, err := exec.Command("go", "build", "-o", filepath.Join(r.dir, "hub"), "../hub").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/hub: %v\n%s", err, out)
	}
	code, stdout, stderr := r.run(t, "", postToolUse, "hook", "claude", "PostToolUse", "--timeout", "5s")
	if code != 0 || stdout != "{}\n" || !strings.Contains(stderr, "hub hook: warning: hub at 127.0.0.1:9 not reachable; nothing injected") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, {} and hub hook's warning that the hub is not reachable", code, stdout, stderr)
	}
}

// TestGuardCheckBesideAnOlderHub: a hub older than `guard check --staged`
// refuses the flag (exit 1, as it refuses a commit); hub-hook then runs
// the check as before the flag, the hub asking git, and the commit goes
// on with nothing of the refusal shown. A hub that knows the flag is run
// once, and its refusal of the commit is the commit's, with its words.
func TestGuardCheckBesideAnOlderHub(t *testing.T) {
	r := newRig(t, false)
	repo := t.TempDir()
	cmd := exec.Command("git", "init", "-q", ".")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("git", "add", "a.go")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	hub := func(script string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(r.dir, "hub"), []byte("#!/bin/sh\necho \"$@\" >>"+r.record+"\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// As Go's flag package refuses a flag it does not know.
	hub(`case "$3" in --staged) printf 'flag provided but not defined: -staged\nUsage of hub guard check:\n  -timeout duration\n' >&2; echo 'hub: flag provided but not defined: -staged' >&2; exit 1;; esac` + "\nexit 0\n")
	code, _, stderr := r.run(t, repo, "", "guard", "check")
	if got, want := r.handedOff(t), "guard check --staged -- a.go\nguard check\n"; code != 0 || stderr != "" || got != want {
		t.Errorf("beside an older hub: exit %d, stderr %q, the hub ran %q; want 0, nothing on stderr and %q", code, stderr, got, want)
	}

	hub("echo 'hub guard: commit refused: 1 staged path(s) reserved exclusively by other agents:' >&2\nexit 1\n")
	code, _, stderr = r.run(t, repo, "", "guard", "check")
	if got, want := r.handedOff(t), "guard check --staged -- a.go\n"; code != 1 || !strings.Contains(stderr, "commit refused") || got != want {
		t.Errorf("a commit refused by the hub: exit %d, stderr %q, the hub ran %q; want 1, its refusal, and %q", code, stderr, got, want)
	}
}
