package deliver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/termtext"
)

// Tmux drives one pane of a tmux server through the tmux command.
type Tmux struct {
	// Target is the pane, in tmux's target syntax (session:window.pane, %id).
	Target string
	// Socket is the server's socket name (tmux -L); "" is the default server.
	Socket string
}

// run runs tmux with args against the server and returns its output.
func (t Tmux) run(ctx context.Context, args ...string) (string, error) {
	return t.runIn(ctx, nil, args...)
}

// runIn runs tmux with args and stdin against the server.
func (t Tmux) runIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	name := args[0]
	if t.Socket != "" {
		args = append([]string{"-L", t.Socket}, args...)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "tmux", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", name, err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Pane is what one look at the pane shows.
type Pane struct {
	// Screen is the visible content and the cursor position: while it
	// changes, someone (the agent, the user) is at work in the pane.
	Screen string
	// InMode is true in copy mode and the like: keys would go to tmux.
	InMode bool
	// Dead is true when the pane's program has exited.
	Dead bool
	// Command is the program running in the pane.
	Command string
}

// paneFormat reads the pane's state in one display-message call; the
// separator is a character no command name holds.
const paneFormat = "#{pane_in_mode}\x1f#{pane_dead}\x1f#{cursor_x},#{cursor_y}\x1f#{pane_current_command}"

// Look reads the pane's state and its visible content.
func (t Tmux) Look(ctx context.Context) (Pane, error) {
	info, err := t.run(ctx, "display-message", "-p", "-t", t.Target, paneFormat)
	if err != nil {
		return Pane{}, err
	}
	f := strings.Split(strings.TrimRight(info, "\n"), "\x1f")
	if len(f) != 4 {
		return Pane{}, fmt.Errorf("tmux display-message answered %q: is %q a pane?", info, t.Target)
	}
	screen, err := t.run(ctx, "capture-pane", "-p", "-t", t.Target)
	if err != nil {
		return Pane{}, err
	}
	return Pane{Screen: f[2] + "\n" + screen, InMode: f[0] == "1", Dead: f[1] == "1", Command: f[3]}, nil
}

// shells are programs that would run typed text as a command: the
// deliverer never types into them, whatever --expect says.
var shells = []string{"sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu", "elvish", "xonsh", "pwsh"}

// IsShell reports whether the pane runs a shell rather than an agent.
func (p Pane) IsShell() bool {
	return isShell(p.Command)
}

func isShell(command string) bool {
	return slices.Contains(shells, strings.TrimPrefix(filepath.Base(command), "-"))
}

// DefaultExpect are the programs a pane may run for the deliverer to
// type into it: the agent hosts by the names tmux shows for them
// (pane_current_command). Claude Code's native build names its process
// after its version ("2.1.34"), hence the version pattern.
var DefaultExpect = []string{"claude", "codex", "gemini", "aider", "opencode", "goose", "qwen", "crush", "cursor-agent", "amp", "[0-9]*.[0-9]*.[0-9]*"}

// Expect is the allow-list of the programs the deliverer types into:
// names or path.Match patterns, compared with the pane's command.
type Expect []string

// ParseExpect parses a comma-separated --expect list. It refuses an empty
// list, a bad pattern and a shell: typed text would run as a command.
func ParseExpect(list string) (Expect, error) {
	var e Expect
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, err := path.Match(name, ""); err != nil {
			return nil, fmt.Errorf("--expect %q: a bad pattern (%v): give program names such as claude,codex", name, err)
		}
		if isShell(name) {
			return nil, fmt.Errorf("--expect %q is a shell: text typed there would run as commands; give the agent's program instead (tmux display -p -t PANE '#{pane_current_command}' shows it)", name)
		}
		e = append(e, name)
	}
	if len(e) == 0 {
		return nil, fmt.Errorf("--expect is empty: give the agent's program, such as claude or codex")
	}
	return e, nil
}

// Allows reports whether the pane runs a program on the list (and not a
// shell, whatever the list says).
func (e Expect) Allows(p Pane) bool {
	if p.IsShell() {
		return false
	}
	name := strings.TrimPrefix(filepath.Base(p.Command), "-")
	for _, pat := range e {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// keyPause separates the pasted text from the Enter that submits it, so
// the program has read the paste before the pane is looked at again.
const keyPause = 150 * time.Millisecond

// pasteBuffer is the tmux buffer the text goes through, one per process
// so that two deliverers on one server do not paste each other's text.
var pasteBuffer = fmt.Sprintf("hub-deliver-%d", os.Getpid())

// Paste puts text into the pane as one paste, never as keys: the text,
// made one line without control characters (termtext.Line), is loaded
// into a tmux buffer from standard input and pasted with bracketed paste
// when the program asked for it (paste-buffer -p), the buffer deleted
// (-d). Nothing is submitted: Enter does that.
func (t Tmux) Paste(ctx context.Context, text string) error {
	if _, err := t.runIn(ctx, strings.NewReader(termtext.Line(text)), "load-buffer", "-b", pasteBuffer, "-"); err != nil {
		return err
	}
	_, err := t.run(ctx, "paste-buffer", "-p", "-d", "-b", pasteBuffer, "-t", t.Target)
	return err
}

// Enter presses Enter in the pane, even if ctx has ended, so that a paste
// the caller decided to submit is not left half done.
func (t Tmux) Enter(ctx context.Context) error {
	_, err := t.run(context.WithoutCancel(ctx), "send-keys", "-t", t.Target, "Enter")
	return err
}
