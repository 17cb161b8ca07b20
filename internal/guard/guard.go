// Package guard is the hub's pre-commit guard: a git hook that refuses a
// commit touching paths another agent reserved exclusively, names the
// holder, pattern and expiry, and lets the commit through with a one-line
// warning when the hub cannot be asked. `hub guard install` writes the
// hook (chaining to the one it finds), `hub guard check` is what it runs.
package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// DefaultTimeout bounds how long the check waits for the hub.
const DefaultTimeout = 2 * time.Second

// marker identifies a hook written by Install.
const marker = "# hub guard: pre-commit hook written by `hub guard install`"

// chainedName is where Install moves a pre-commit hook it finds, so the
// guard runs first and then that hook.
const chainedName = "pre-commit.chained"

// Install writes the pre-commit hook of the git repository at repo (its
// worktree or any directory inside it) that runs `hubPath guard check`. A
// hook already there that Install did not write is kept: it is renamed
// pre-commit.chained and run after the check. Installing again rewrites
// the hook in place. It returns the hook's path.
func Install(repo, hubPath string) (string, error) {
	out, err := hooklocal.Git(repo, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", fmt.Errorf("%s is not inside a git repository (%w): give --repo DIR", repo, err)
	}
	hooks := strings.TrimSpace(string(out))
	if !filepath.IsAbs(hooks) { // relative to the directory git ran in
		if hooks, err = filepath.Abs(filepath.Join(repo, hooks)); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return "", fmt.Errorf("create hooks directory: %w", err)
	}
	hook := filepath.Join(hooks, "pre-commit")
	old, err := os.ReadFile(hook)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("read existing hook: %w", err)
	case !bytes.Contains(old, []byte(marker)):
		chained := filepath.Join(hooks, chainedName)
		if _, err := os.Stat(chained); err == nil {
			return "", fmt.Errorf("both %s and %s exist: merge them by hand, then run hub guard install again", hook, chained)
		}
		if err := os.Rename(hook, chained); err != nil {
			return "", fmt.Errorf("keep the existing hook: %w", err)
		}
	}
	script := fmt.Sprintf(`#!/bin/sh
%s
# Refuses a commit touching paths that another agent reserved exclusively.
# Override for one commit: HUB_GUARD=off git commit ...  (or git commit --no-verify)
%s guard check || exit $?
hook_dir=$(dirname "$0")
if [ -x "$hook_dir/%s" ]; then
	exec "$hook_dir/%s" "$@"
fi
`, marker, shellQuote(hubPath), chainedName, chainedName)
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		return "", fmt.Errorf("write hook: %w", err)
	}
	return hook, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Blocked is a staged path covered by another agent's exclusive reservation.
type Blocked struct {
	Path        string
	Reservation *hubv1.Reservation
}

// Blocking returns the staged paths covered by an exclusive reservation of
// an agent other than self, in the order of paths.
func Blocking(paths []string, rs []*hubv1.Reservation, self string) []Blocked {
	var out []Blocked
	for _, p := range paths {
		for _, r := range rs {
			if r.GetAgent() != self && r.GetMode() == string(hub.ReservationExclusive) && hub.MatchPattern(r.GetPattern(), p) {
				out = append(out, Blocked{Path: p, Reservation: r})
				break
			}
		}
	}
	return out
}

// Options configure Check.
type Options struct {
	Dir     string        // the repository (the hook runs in its top directory)
	Addr    string        // the hub's gRPC address
	Token   string        // this agent's token
	Timeout time.Duration // how long to wait for the hub; DefaultTimeout if zero
	Getenv  func(string) string
	// Staged are the staged paths when the caller knows them (hub-hook
	// found them: `hub guard check --staged -- PATH...`); nil: git is asked.
	Staged []string
}

// Check decides whether the staged commit in o.Dir may go on. It writes
// the reasons to stderr and returns false only when another agent holds an
// exclusive reservation over a staged path; every failure to ask (no
// token, hub down, slow or refusing) lets the commit through with a
// one-line warning.
func Check(ctx context.Context, o Options, stderr io.Writer) bool {
	paths := o.Staged
	if paths == nil {
		var settled bool
		if paths, settled = hooklocal.CommitSettled(o.Dir, o.Getenv, stderr); settled {
			return true
		}
	} else if len(paths) == 0 || hooklocal.GuardOff(o.Getenv) {
		return true
	}
	warn := func(format string, args ...any) bool {
		fmt.Fprintf(stderr, "hub guard: warning: "+format+"; commit allowed without checking reservations\n", args...)
		return true
	}
	if o.Token == "" {
		return warn("no agent token (set HUB_TOKEN, as for hub mcp)")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := mcpbridge.Dial(o.Addr, o.Token)
	if err != nil {
		return warn("%v", err)
	}
	defer conn.Close()
	client := hubv1.NewAgentServiceClient(conn)
	st, err := client.GetStatus(ctx, &hubv1.GetStatusRequest{})
	if err != nil {
		return warn("hub at %s not reachable (%v)", o.Addr, hubErr(err))
	}
	list, err := client.ListReservations(ctx, &hubv1.ListReservationsRequest{})
	if err != nil {
		return warn("hub at %s did not list reservations (%v)", o.Addr, hubErr(err))
	}
	blocked := Blocking(paths, list.GetReservations(), st.GetStatus().GetAgent())
	if len(blocked) == 0 {
		return true
	}
	refuse(stderr, blocked)
	return false
}

// refuse tells the committer why the commit is refused: one line per
// blocked path, whatever the names hold. termtext.Line removes escapes and
// newlines that would forge other lines (an "allowed" line) or act on the
// committer's terminal; the reason is another agent's text.
func refuse(stderr io.Writer, blocked []Blocked) {
	fmt.Fprintf(stderr, "hub guard: commit refused: %d staged path(s) reserved exclusively by other agents:\n", len(blocked))
	for _, b := range blocked {
		r := b.Reservation
		fmt.Fprintf(stderr, "  %s: %s held by %s until %s", termtext.Line(b.Path), termtext.Line(r.GetPattern()), termtext.Line(r.GetAgent()), r.GetExpiresAt().AsTime().UTC().Format(time.RFC3339))
		if r.GetReason() != "" {
			fmt.Fprintf(stderr, " (%s)", termtext.Line(r.GetReason()))
		}
		fmt.Fprintln(stderr)
	}
	fmt.Fprintf(stderr, "Ask the holder to release, wait for the expiry, or override: %s=off git commit ... (or git commit --no-verify)\n", hooklocal.Override)
}

// hubErr shortens a gRPC error to its message.
func hubErr(err error) string {
	s := err.Error()
	if i := strings.Index(s, "desc = "); i >= 0 {
		return s[i+len("desc = "):]
	}
	return s
}
