package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenthub/hub/internal/setup"
)

const doctorUsage = `Usage: hub doctor [--project DIR]

Reads the agent hosts' configs as each host does (the user's, under the
host's own variable, and the project's) and reports the hub's hooks a host
would skip, with the command or edit that fixes each: Claude Code with
disableAllHooks, Gemini CLI with hooksConfig off or the hub's hooks
disabled or an untrusted folder, Codex with a hook not trusted, changed
since it was trusted or disabled, and a hook whose hub binary is gone.
Exit status 1 when a host skips the hub's hooks.

Flags:
`

// runDoctor runs `hub doctor`.
func runDoctor(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), doctorUsage)
		fs.PrintDefaults()
	}
	project := fs.String("project", ".", "the project the agent works in (its own host configs and its folder trust)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub doctor takes only flags", fs.Args())
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find the home directory: %w", err)
	}
	dir, err := filepath.Abs(*project)
	if err != nil {
		return err
	}
	failed := 0
	var none []string
	for _, host := range setup.Hosts {
		o := setup.Options{Host: host, Home: home, ConfigDir: os.Getenv(setup.ConfigDirVar(host)), Project: dir}
		found := setup.Check(o, os.Getenv)
		if len(found) == 0 {
			none = append(none, host)
		}
		for _, f := range found {
			switch {
			case f.Problem == "":
				fmt.Fprintf(stdout, "[ok  ] %-6s  %s\n", host, f.Detail)
				continue
			case f.Maybe:
				fmt.Fprintf(stdout, "[warn] %-6s  %s\n", host, f.Problem)
			default:
				failed++
				fmt.Fprintf(stdout, "[fail] %-6s  %s\n", host, f.Problem)
			}
			fmt.Fprintf(stdout, "        %-6s  fix: %s\n", "", f.Fix)
		}
	}
	if len(none) > 0 {
		fmt.Fprintf(stdout, "[skip] no hub hooks for %s (hub setup HOST writes them)\n", strings.Join(none, ", "))
	}
	if failed > 0 {
		return fmt.Errorf("%d host problem(s): see the fixes above", failed)
	}
	return nil
}
