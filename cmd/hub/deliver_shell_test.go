package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// shellAttacks are message bodies that run `id > FILE` in a shell that
// reads the typed line as a command: command substitution in each
// syntax, quotes broken open, a newline or a carriage return that submits
// early, the end of a bracketed paste, Ctrl-C.
func shellAttacks(file func(n int) string) []string {
	return []string{
		fmt.Sprintf("$(id > %s)", file(1)),
		fmt.Sprintf("`id > %s`", file(2)),
		fmt.Sprintf(`"; id > %s; echo "`, file(3)),
		fmt.Sprintf(`'; id > %s; '`, file(4)),
		fmt.Sprintf("hello\nid > %s\n", file(5)),
		fmt.Sprintf("\x1b[201~ id > %s \r", file(6)),
		fmt.Sprintf("(id > %s)", file(7)),
		fmt.Sprintf("\x03id > %s\r", file(8)),
	}
}

// TestDeliverRunsNothingInAWrappedShell puts zsh, bash, dash and fish
// behind the wrappers that hide a shell from tmux's pane_current_command
// (script, sudo, and an ssh-like program that runs the shell under the
// name ssh), posts bodies that would run `id` if typed into a shell, runs
// the real `hub deliver` on each pane, and checks that no command ran and
// nothing was typed.
func TestDeliverRunsNothingInAWrappedShell(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux and shells")
	}
	tm := newTmuxServer(t)
	m, admin, actx, _ := deliverHub(t)
	dir := t.TempDir()
	sshLike := filepath.Join(dir, "ssh-like")
	if err := os.WriteFile(sshLike, []byte("#!/bin/bash\n# What the pane shows under ssh: the wrapper's name, a shell behind it.\nexec -a ssh \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	shells := map[string]string{"zsh": "zsh -f", "bash": "bash --norc --noprofile", "dash": "dash", "fish": "fish --no-config"}
	wrappers := map[string]func(shell string) string{
		"script": func(sh string) string { return fmt.Sprintf("script -q -c '%s' /dev/null", sh) },
		"sudo":   func(sh string) string { return "sudo " + sh },
		"ssh":    func(sh string) string { return sshLike + " " + sh },
	}
	if _, err := exec.LookPath("script"); err != nil {
		t.Log("script is not installed: the script wrapper is skipped")
		delete(wrappers, "script")
	}
	if err := exec.Command("sudo", "-n", "true").Run(); err != nil {
		t.Logf("sudo cannot run without a password here (%v): the sudo wrapper is skipped", err)
		delete(wrappers, "sudo")
	}
	type pane struct {
		name string
		log  *syncBuffer
	}
	var panes []pane
	for sh, shCmd := range shells {
		if _, err := exec.LookPath(sh); err != nil {
			t.Logf("%s is not installed (apt-get install %s): skipped", sh, sh)
			continue
		}
		for wr, wrap := range wrappers {
			name := sh + "-" + wr
			ar, err := admin.CreateAgent(actx, &hubv1.CreateAgentRequest{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			tm.run(t, "new-session", "-d", "-s", name, "-x", "200", "-y", "40", wrap(shCmd))
			_, log := startDeliver(t, m, ar.GetToken(), "--tmux", name, "--tmux-socket", tm.socket, "--cursor-file", filepath.Join(dir, name+".cursor"))
			for _, body := range shellAttacks(func(n int) string { return filepath.Join(dir, fmt.Sprintf("ran-%s-%d", name, n)) }) {
				if _, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{name}, Body: body}); err != nil {
					t.Fatal(err)
				}
			}
			panes = append(panes, pane{name, log})
		}
	}
	if len(panes) == 0 {
		t.Skip("no shell to try")
	}
	ran := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "ran-*"))
		return m
	}
	eventually(t, 30*time.Second, "every deliverer to refuse its pane (or a command to run)", func() bool {
		if len(ran()) > 0 {
			return true
		}
		for _, p := range panes {
			if !strings.Contains(p.log.String(), "not an expected agent") {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // three idle periods: anything typed would have run
	if files := ran(); len(files) > 0 {
		var names []string
		for _, f := range files {
			names = append(names, strings.TrimPrefix(filepath.Base(f), "ran-"))
		}
		t.Errorf("commands ran in %d of %d shells (pane-body): %s", len(files), len(panes), strings.Join(names, ", "))
	}
	for _, p := range panes {
		if h := tm.history(t, p.name); strings.Contains(h, "Agent Hub") {
			t.Errorf("%s: typed into the pane:\n%s", p.name, h)
		}
	}
	if !t.Failed() {
		t.Logf("%d panes (shell behind wrapper), %d bodies each: no command ran", len(panes), len(shellAttacks(func(int) string { return "" })))
	}
}

// bracketedReader asks for bracketed paste, as agent hosts do, and writes
// the first line it reads, bytes as they came, to the file named by its
// argument.
const bracketedReader = `import os, sys
sys.stdout.write("\x1b[?2004h")
print("READY", flush=True)
line = sys.stdin.buffer.readline()
with open(sys.argv[1] + ".part", "wb") as f:
    f.write(line)
os.rename(sys.argv[1] + ".part", sys.argv[1])  # the file appears whole
print("DONE", flush=True)
`

// TestDeliverPastesOneBracketedLine: the notice reaches the program as one
// bracketed paste then Enter, the body's control characters (an early end
// of the paste, newlines, Ctrl-C) gone and its shell syntax left as text.
func TestDeliverPastesOneBracketedLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the stand-in agent in the pane) is not installed")
	}
	tm := newTmuxServer(t)
	m, _, actx, ar := deliverHub(t)
	dir := t.TempDir()
	script, got, ran := filepath.Join(dir, "agent.py"), filepath.Join(dir, "got"), filepath.Join(dir, "ran")
	write(t, script, bracketedReader)
	tm.run(t, "new-session", "-d", "-s", "agent", "-x", "220", "-y", "50", python+" "+script+" "+got)
	_, log := startDeliver(t, m, ar.GetToken(), "--tmux", "agent", "--tmux-socket", tm.socket, "--expect", "python3", "--cursor-file", filepath.Join(dir, "c"))
	body := fmt.Sprintf("one\x1b[201~\nid > %s\r\x03 $(id > %s)\x7f\u202eend", ran, ran)
	if _, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: body}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the stand-in to read a line", func() bool { _, err := os.Stat(got); return err == nil })
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	line := string(b)
	inner, ok := strings.CutPrefix(line, "\x1b[200~")
	if ok {
		inner, ok = strings.CutSuffix(inner, "\x1b[201~\n")
	}
	if !ok {
		t.Fatalf("the program read %q: want one bracketed paste, then Enter\n%s", line, log)
	}
	for _, r := range inner {
		if r < 0x20 || r == 0x7f || r == 0x202e {
			t.Errorf("the paste holds %U: %q", r, inner)
		}
	}
	if want := fmt.Sprintf(`"one[201~ id > %s $(id > %s)end"`, ran, ran); !strings.Contains(inner, want) {
		t.Errorf("the paste %q lacks the body as text %s", inner, want)
	}
	if !strings.HasPrefix(inner, "[Agent Hub notice for alice") {
		t.Errorf("the paste %q is not framed as a notice", inner)
	}
}

// turnsIntoAShell reads one byte, as a program in cbreak mode does, then
// becomes zsh: the pane's program changes between the paste and Enter.
const turnsIntoAShell = `import os, sys, tty
tty.setcbreak(0)
print("READY", flush=True)
os.read(0, 1)
os.execvp("zsh", ["zsh", "-f"])
`

// TestDeliverLooksAgainBeforeEnter: when the pane's program changes while
// the notice is being pasted (here it becomes a shell), Enter is not
// pressed, the command in the paste does not run and the deliverer stops
// saying why.
func TestDeliverLooksAgainBeforeEnter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hub binary and runs tmux")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the stand-in agent in the pane) is not installed")
	}
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed (apt-get install zsh)")
	}
	tm := newTmuxServer(t)
	m, _, actx, ar := deliverHub(t)
	dir := t.TempDir()
	script, ran := filepath.Join(dir, "agent.py"), filepath.Join(dir, "ran")
	write(t, script, turnsIntoAShell)
	tm.run(t, "new-session", "-d", "-s", "agent", "-x", "220", "-y", "50", python+" "+script)
	d, log := startDeliver(t, m, ar.GetToken(), "--tmux", "agent", "--tmux-socket", tm.socket, "--expect", "python3", "--cursor-file", filepath.Join(dir, "c"))
	if _, err := hubv1.NewAgentServiceClient(m.Conn()).PostMessage(actx, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: fmt.Sprintf("$(id > %s)", ran)}); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(log.String(), "it was not submitted") {
			t.Errorf("hub deliver exited with %v:\n%s", err, log)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("hub deliver did not stop after the pane became a shell:\n%s", log)
		d.Process.Kill()
		<-exited
	}
	time.Sleep(time.Second)
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the pasted command ran in the shell:\n%s", tm.history(t, "agent"))
	}
}
