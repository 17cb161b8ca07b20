package deliver

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
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
	if t.Socket != "" {
		args = append([]string{"-L", t.Socket}, args...)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "tmux", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", args[0], err, strings.TrimSpace(errOut.String()))
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
// deliverer never types into them.
var shells = []string{"sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu", "elvish", "xonsh", "pwsh"}

// IsShell reports whether the pane runs a shell rather than an agent.
func (p Pane) IsShell() bool {
	return slices.Contains(shells, strings.TrimPrefix(filepath.Base(p.Command), "-"))
}

// keyPause separates the typed text from the Enter that submits it, so a
// terminal program sees the text before the key (some treat a fast
// text-and-Enter as a paste and keep the newline in the input).
const keyPause = 150 * time.Millisecond

// Type types line into the pane as literal keys, then presses Enter. Once
// the text is typed the Enter follows even if ctx ends, so no half-typed
// line is left in the pane.
func (t Tmux) Type(ctx context.Context, line string) error {
	if _, err := t.run(ctx, "send-keys", "-t", t.Target, "-l", "--", line); err != nil {
		return err
	}
	time.Sleep(keyPause)
	_, err := t.run(context.WithoutCancel(ctx), "send-keys", "-t", t.Target, "Enter")
	return err
}
