package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agenthub/hub/internal/guard"
)

// errCommitRefused makes `hub guard check` exit 1 after it explained why.
var errCommitRefused = errors.New("commit refused by path reservations")

const guardUsage = `Usage:
  hub guard install [--repo DIR]   add a git pre-commit hook running hub guard check
                                   (an existing hook is kept and run after it)
  hub guard check [--timeout 2s]   refuse the staged commit if another agent holds an
                                   exclusive reservation over a staged path
  hub guard check --staged [--] PATH...
                                   the same for these paths, taken as the staged ones
                                   (hub-hook passes those it found, so git is asked once)

The check asks the hub at HUB_ADDR (default 127.0.0.1:7700) with HUB_TOKEN, the same
environment as hub mcp. When the hub cannot be asked, the commit goes through with a
one-line warning. Override for one commit: HUB_GUARD=off git commit ... (or --no-verify).
`

// runGuard runs `hub guard install|check`.
func runGuard(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, guardUsage)
		return fmt.Errorf("hub guard needs a command: install or check")
	}
	switch args[0] {
	case "install":
		fs := flag.NewFlagSet("hub guard install", flag.ContinueOnError)
		fs.SetOutput(stderr)
		repo := fs.String("repo", ".", "the git repository (any directory inside it)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the hub binary: %w", err)
		}
		if exe, err = filepath.EvalSymlinks(exe); err != nil {
			return fmt.Errorf("find the hub binary: %w", err)
		}
		if p := hookBinary(exe); p != "" {
			exe = p // hub-hook: the same check, started in a few milliseconds
		}
		hook, err := guard.Install(*repo, exe)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "installed %s: commits now check path reservations (set HUB_TOKEN and HUB_ADDR as for hub mcp)\n", hook)
		return nil
	case "check":
		fs := flag.NewFlagSet("hub guard check", flag.ContinueOnError)
		fs.SetOutput(stderr)
		timeout := fs.Duration("timeout", guard.DefaultTimeout, "how long to wait for the hub before letting the commit through")
		staged := fs.Bool("staged", false, "the staged paths are the arguments (hub-hook passes those it found); else git is asked")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		o := guard.Options{
			Dir: ".", Addr: mcpEnvOr("HUB_ADDR", "127.0.0.1:7700"), Token: os.Getenv("HUB_TOKEN"),
			Timeout: *timeout, Getenv: os.Getenv,
		}
		if *staged {
			o.Staged = append([]string{}, fs.Args()...)
		}
		if !guard.Check(ctx, o, stderr) {
			return errCommitRefused
		}
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, guardUsage)
		return nil
	}
	return fmt.Errorf("unknown guard command %q\n%s", args[0], guardUsage)
}
