// Command hub-hook is what agent hosts run at every hook and git at every
// commit, in place of the hub binary: `hub-hook hook HOST EVENT [flags]`
// and `hub-hook guard check`, with the flags, environment and answers of
// `hub hook` and `hub guard check`.
//
// It answers on this machine what needs no hub (a tool use, a prompt, a
// notification, a stop, a session's end or a permission request the
// agent's bridge answers, a commit with nothing staged or the guard turned
// off) and runs the hub binary installed beside it, with the same
// arguments and the host's input whole, for everything else. It links
// none of the hub's server, gRPC or generated API, whose package
// initialisation is most of a hub command's start, so the runs that are
// nearly all of an agent's hooks end in a few milliseconds
// (scripts/bench-hook-start.sh).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/version"
)

const usage = `Usage:
  hub-hook hook HOST EVENT [flags]   as hub hook (hub hook -h)
  hub-hook guard check [flags]       as hub guard check (hub guard help)
  hub-hook version                   its version, commit and build date

What the agent hosts' hooks and the git pre-commit guard run (hub setup and
hub guard install write it when it is installed beside hub). A tool use, a
prompt, a notification, a stop, a session's end or a permission request the
agent's hub mcp answers and a commit with nothing staged (the index and HEAD say so, else
git diff --cached) are answered here; anything else runs the hub binary
beside this one with the same arguments and the host's input, a guard check
handed the staged paths (--staged; a hub older than that flag asks git).
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs hub-hook with args and returns its exit status, unless it hands
// the run to the hub (execHub).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && args[0] == "hook":
		h, event, o, ok, err := hooklocal.ParseHook(args[1:], stdout, stderr)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0
		case !ok:
			return 0 // the failure is written; the host goes on
		}
		exit, answered, read := hooklocal.Answered(ctx, h, event, stdin, stdout, o)
		if answered {
			return exit
		}
		if read != nil {
			err = giveBack(read)
		}
		if err == nil {
			err = execHub(args)
		}
		hooklocal.Fail(stdout, stderr, "%v; nothing injected", err)
		return 0 // a hook never breaks its host
	case len(args) > 0 && args[0] == "guard":
		check := len(args) == 2 && args[1] == "check"
		if check {
			paths, settled := hooklocal.CommitSettled(".", os.Getenv, stderr)
			if settled {
				return 0
			}
			if handed := handStaged(args, paths); len(handed) > len(args) {
				if code, ran := checkStaged(handed, stdin, stdout, stderr); ran {
					return code
				}
				// A hub older than --staged: it asks git for the paths.
			}
		}
		err := execHub(args) // a check, or another guard command
		if !check {
			fmt.Fprintf(stderr, "hub-hook: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "hub guard: warning: %v; commit allowed without checking reservations\n", err)
		return 0 // as when the hub cannot be asked
	case len(args) == 1 && args[0] == "version":
		fmt.Fprint(stdout, version.Long("hub-hook"))
		return 0
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprint(stderr, usage)
	return 2
}

// maxHanded bounds the staged paths handed to the hub on its command line,
// well below the system's limit on arguments (ARG_MAX, with the
// environment); beyond it the hub asks git again.
const maxHanded = 256 << 10

// handStaged returns the hub's command line of a guard check (args) that
// hands it the staged paths hub-hook found: `guard check --staged --
// PATH...`, so the hub does not ask git for them again.
func handStaged(args, paths []string) []string {
	size := 0
	for _, p := range paths {
		size += len(p) + 1
	}
	if size > maxHanded {
		return args
	}
	return append(append(args[:len(args):len(args)], "--staged", "--"), paths...)
}

// refusedStaged is what a hub older than `guard check --staged` says of
// the flag (Go's flag package) before it exits 1.
const refusedStaged = "flag provided but not defined: -staged"

// checkStaged runs the hub binary beside this one for the guard check
// args, which hand it the staged paths (handStaged), and returns its exit
// status. ran false: no hub ran, or one older than --staged refused the
// flag (what it wrote is dropped): the caller runs the check without it.
// The hub's standard error is held until it exits, or past its first
// lines, to tell its refusal of the flag from its answer.
func checkStaged(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ran bool) {
	hub, err := hooklocal.Beside("hub")
	if err != nil {
		return 0, false
	}
	held := &heldWriter{w: stderr}
	cmd := exec.Command(hub, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, held
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		return 0, false
	}
	if code == 1 && !held.passed && bytes.Contains(held.buf.Bytes(), []byte(refusedStaged)) {
		return 0, false
	}
	held.flush()
	return code, true
}

// heldWriter holds what is written to w up to maxHeld bytes, then writes
// it and the rest through.
type heldWriter struct {
	w      io.Writer
	buf    bytes.Buffer
	passed bool
}

// maxHeld bounds what a heldWriter holds: a hub refusing a flag says so
// in its first lines.
const maxHeld = 4 << 10

func (h *heldWriter) Write(p []byte) (int, error) {
	if !h.passed && h.buf.Len()+len(p) <= maxHeld {
		return h.buf.Write(p)
	}
	h.flush()
	return h.w.Write(p)
}

// flush writes what h holds and passes the rest through.
func (h *heldWriter) flush() {
	if !h.passed {
		h.passed = true
		_, _ = h.w.Write(h.buf.Bytes())
	}
}

// execHub runs the hub binary beside this one with args in place of this
// process: same standard input, output and environment. It returns only
// when it could not.
func execHub(args []string) error {
	hub, err := hooklocal.Beside("hub")
	if err != nil {
		return fmt.Errorf("cannot run the hub binary beside hub-hook (%v): install hub and hub-hook in one directory", err)
	}
	if err := syscall.Exec(hub, append([]string{hub}, args...), os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", hub, err)
	}
	return nil
}
