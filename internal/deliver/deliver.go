// Package deliver is `hub deliver --tmux TARGET`: a sidecar beside an agent
// that has no hooks. It long-polls the hub as that agent and, when the
// agent's tmux pane has been idle for a few seconds and runs an expected
// program (Expect: an agent host, never a shell or a wrapper that may
// hide one), pastes the pulses, nudges and messages addressed to the agent
// into the pane as one line and presses Enter, as the original heartbeat
// script typed them. The hub itself never runs commands: this process,
// started by the user next to the agent, pastes.
package deliver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// Options configure Run.
type Options struct {
	Tmux Tmux
	// Expect lists the programs the pane may run for anything to be
	// pasted into it (default DefaultExpect). A pane running anything else
	// (a shell, or a wrapper such as script, sudo or ssh that may hide
	// one) gets nothing.
	Expect Expect
	// CursorFile keeps the ID of the newest message handled, so a restart
	// neither pastes a message again nor skips one. Default:
	// DefaultCursorFile of the agent.
	CursorFile string
	// Idle is how long the pane must show the same screen before anything
	// is pasted (default 3s).
	Idle time.Duration
	// Look is how often the pane is looked at while waiting (default 500ms).
	Look   time.Duration
	Logger *slog.Logger
	// Clock paces the looks, the pauses and the retries (hub.SystemClock
	// when nil).
	Clock hub.Clock
}

// Defaults of Options.
const (
	DefaultIdle = 3 * time.Second
	defaultLook = 500 * time.Millisecond
	// pollWait is how long one long-poll parks in the hub. It holds one of
	// the agent's parked waits (four by default).
	pollWait = 50 * time.Second
	// pollLimit is how many messages one long-poll returns at most.
	pollLimit = 50
	retryMax  = 5 * time.Second
	// copyModeWait is how long a paste waits for the pane to leave copy
	// mode before Enter.
	copyModeWait = 30 * time.Second
)

// DefaultCursorFile is where the deliverer of agent name keeps its cursor
// when no file is named: beside the token `hub mcp --join` keeps, as
// agent-hub/NAME.deliver-cursor in the user's configuration directory.
func DefaultCursorFile(name string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the cursor file (give one with --cursor-file): %w", err)
	}
	return filepath.Join(dir, "agent-hub", name+".deliver-cursor"), nil
}

// Run delivers until ctx ends (nil) or delivery cannot go on: the hub
// refuses the token, the pane is gone or its program exited, or the
// cursor cannot be kept.
//
// Cursor: the first start (no cursor file) begins at the agent's unread
// messages; every message the hub returns moves the cursor past it once
// it is pasted or found not deliverable, and the cursor is written to the
// file after each step. A message is pasted at most once across restarts
// (except when the process dies between pasting and writing the file) and
// none is skipped. Pasting marks nothing read: the pasted line is a notice,
// and the agent reads the messages with its own tools.
//
// Its long-polls are the tmux path's (via "tmux"): the hub passes over the
// messages already in the agent's context or on their way through another
// of its paths. Once the pane is idle it looks again, so that what another
// path delivered meanwhile is not pasted twice, and once the pasted line
// is submitted it confirms the messages it names (ConfirmDelivery): they
// are then in the agent's context. A paste the pane refused confirms
// nothing.
func Run(ctx context.Context, client hubv1.AgentServiceClient, opts Options) error {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Look <= 0 {
		opts.Look = defaultLook
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if len(opts.Expect) == 0 {
		opts.Expect = DefaultExpect
	}
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	st, err := client.GetStatus(ctx, &hubv1.GetStatusRequest{})
	if err != nil {
		return fmt.Errorf("ask the hub who this agent is: %s", status.Convert(err).Message())
	}
	if _, err := opts.Tmux.Look(ctx); err != nil {
		return fmt.Errorf("tmux pane %q: %w", opts.Tmux.Target, err)
	}
	d := &deliverer{client: client, opts: opts, self: st.GetStatus().GetAgent()}
	if d.opts.CursorFile == "" {
		if d.opts.CursorFile, err = DefaultCursorFile(d.self); err != nil {
			return err
		}
	}
	if d.cursor, err = loadCursor(d.opts.CursorFile); err != nil {
		return err
	}
	opts.Logger.Info("delivering", "agent", d.self, "pane", opts.Tmux.Target, "expect", strings.Join(opts.Expect, ","), "cursor", d.cursor, "cursor_file", d.opts.CursorFile)
	err = d.loop(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

type deliverer struct {
	client hubv1.AgentServiceClient
	opts   Options
	self   string
	cursor string // "" before the first poll: the hub answers with unread messages
}

func (d *deliverer) loop(ctx context.Context) error {
	retry := time.Duration(0)
	for ctx.Err() == nil {
		msgs, next, err := d.poll(ctx, d.cursor, pollWait)
		if err != nil {
			switch status.Code(err) {
			case codes.Unauthenticated, codes.PermissionDenied:
				return fmt.Errorf("the hub refused this agent: %s", status.Convert(err).Message())
			case codes.InvalidArgument:
				if d.cursor != "" { // past the hub's newest message: another hub answers now
					d.opts.Logger.Warn("cursor refused by the hub; starting again at the unread messages", "cursor", d.cursor, "err", err)
					d.cursor = ""
				}
			}
			retry = min(max(2*retry, 250*time.Millisecond), retryMax)
			d.opts.Logger.Debug("long-poll failed; retrying with the same cursor", "in", retry, "err", err)
			if !d.sleep(ctx, retry) {
				return nil
			}
			continue
		}
		retry = 0
		if pending := d.deliverable(msgs); len(pending) > 0 {
			if err := d.waitIdle(ctx); err != nil {
				return err
			}
			// Looked at again from the same cursor: what another path
			// delivered while the pane was busy is left out, what arrived
			// meanwhile goes in the same line.
			if fresh, after, err := d.poll(ctx, d.cursor, 0); err == nil {
				pending, next = d.deliverable(fresh), after
			}
			if len(pending) > 0 {
				line, shown := Render(d.self, pending)
				if err := d.deliver(ctx, line); err != nil {
					return err
				}
				d.opts.Logger.Info("pasted", "messages", len(pending), "first", pending[0].GetId(), "last", pending[len(pending)-1].GetId())
				d.confirm(ctx, pending[:shown]) // those counted as "more" are not in the line
			}
		}
		if next != d.cursor {
			d.cursor = next
			if err := saveCursor(d.opts.CursorFile, next); err != nil {
				return err
			}
		}
	}
	return nil
}

// poll long-polls the hub for up to wait after cursor and returns the
// messages and the cursor past them.
func (d *deliverer) poll(ctx context.Context, cursor string, wait time.Duration) ([]*hubv1.Message, string, error) {
	secs := int32(wait / time.Second)
	rctx, cancel := context.WithTimeout(ctx, wait+10*time.Second)
	defer cancel()
	r, err := d.client.WaitForMessages(rctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: &secs, AfterId: cursor, Limit: pollLimit, Via: viaTmux})
	if err != nil {
		return nil, "", err
	}
	msgs, next := r.GetMessages(), r.GetCursor()
	if n := len(msgs); n > 0 && next == "" {
		next = msgs[n-1].GetId()
	}
	if next == "" {
		next = cursor
	}
	return msgs, next, nil
}

// viaTmux names the tmux path to the hub.
const viaTmux = "tmux"

// confirm tells the hub that msgs, named by a line submitted in the pane,
// are in the agent's context. A failure is logged: they stay where they
// were.
func (d *deliverer) confirm(ctx context.Context, msgs []*hubv1.Message) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.GetId()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := d.client.ConfirmDelivery(rctx, &hubv1.ConfirmDeliveryRequest{Ids: ids, Via: viaTmux}); err != nil {
		d.opts.Logger.Warn("the hub did not take the confirmation of a paste", "ids", strings.Join(ids, ","), "err", status.Convert(err).Message())
	}
}

func (d *deliverer) deliverable(msgs []*hubv1.Message) []*hubv1.Message {
	var out []*hubv1.Message
	for _, m := range msgs {
		if Deliverable(m, d.self) {
			out = append(out, m)
		}
	}
	return out
}

// waitIdle returns once the pane has shown the same screen for opts.Idle,
// outside copy mode and running an expected program (opts.Expect): in a
// shell, or in a wrapper that may hide one, pasted text could run as a
// command. The deliverer waits, and says why once.
func (d *deliverer) waitIdle(ctx context.Context) error {
	var w idleWatch
	warned := ""
	for {
		p, err := d.opts.Tmux.Look(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("tmux pane %q: %w", d.opts.Tmux.Target, err)
		case p.Dead:
			return fmt.Errorf("the program in tmux pane %q exited", d.opts.Tmux.Target)
		case !d.opts.Expect.Allows(p):
			if warned != p.Command {
				d.opts.Logger.Warn("the pane runs "+d.describe(p)+": nothing is pasted until an expected agent runs there", "pane", d.opts.Tmux.Target, "command", p.Command, "expect", strings.Join(d.opts.Expect, ","))
				warned = p.Command
			}
			w = idleWatch{}
		case p.InMode:
			w = idleWatch{}
		case w.observe(p.Screen, d.opts.Clock.Now()) >= d.opts.Idle:
			return nil
		}
		if !d.sleep(ctx, d.opts.Look) {
			return ctx.Err()
		}
	}
}

// describe says what the pane runs instead of an expected agent.
func (d *deliverer) describe(p Pane) string {
	if p.IsShell() {
		return fmt.Sprintf("a shell (%s), not an expected agent", p.Command)
	}
	return fmt.Sprintf("%q, not an expected agent (if that is the agent, pass --expect %s)", p.Command, p.Command)
}

// deliver pastes line into the idle pane and submits it. The pane is
// looked at again after the paste: Enter is pressed only if it still runs
// an expected program (copy mode is waited out). If the program changed,
// nothing is submitted and delivery stops: a person should look.
func (d *deliverer) deliver(ctx context.Context, line string) error {
	t := d.opts.Tmux
	if err := t.Paste(ctx, line); err != nil {
		return fmt.Errorf("paste into pane %q: %w", t.Target, err)
	}
	d.sleep(context.WithoutCancel(ctx), keyPause)
	pasted := d.opts.Clock.Now()
	for {
		// The paste is in the pane: the look goes on even if ctx ends, so
		// the paste is submitted or refused, not left behind unsaid.
		p, err := t.Look(context.WithoutCancel(ctx))
		switch {
		case err != nil:
			return fmt.Errorf("tmux pane %q after the paste: %w", t.Target, err)
		case p.Dead || !d.opts.Expect.Allows(p):
			return fmt.Errorf("tmux pane %q runs %q since the notice was pasted: it was not submitted (no Enter); clear the pane's input line by hand before anything else", t.Target, p.Command)
		case p.InMode:
			if ctx.Err() != nil || d.opts.Clock.Now().Sub(pasted) > copyModeWait {
				return fmt.Errorf("tmux pane %q stayed in copy mode: the pasted notice was not submitted (press Enter in the pane to submit it)", t.Target)
			}
			d.sleep(ctx, d.opts.Look)
			continue
		}
		if err := t.Enter(ctx); err != nil {
			return fmt.Errorf("submit in pane %q: %w", t.Target, err)
		}
		return nil
	}
}

// idleWatch tells how long a pane has shown the same screen.
type idleWatch struct {
	screen string
	since  time.Time
	seen   bool
}

// observe records the screen seen at now and returns how long it has been
// the same (0 when it just changed).
func (w *idleWatch) observe(screen string, now time.Time) time.Duration {
	if !w.seen || screen != w.screen {
		w.screen, w.since, w.seen = screen, now, true
		return 0
	}
	return now.Sub(w.since)
}

// sleep waits for dur on the clock and reports whether ctx is still live.
func (d *deliverer) sleep(ctx context.Context, dur time.Duration) bool {
	t := d.opts.Clock.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// loadCursor reads the cursor file: "" when there is none yet.
func loadCursor(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("read the cursor file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if n, err := strconv.ParseInt(s, 10, 64); err != nil || n < 0 {
		return "", fmt.Errorf("cursor file %s holds %q, not a message ID: delete it to start again at the unread messages", path, s)
	}
	return s, nil
}

// saveCursor replaces the cursor file (written aside, flushed, renamed).
func saveCursor(path, cursor string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keep the cursor: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("keep the cursor: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(cursor + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("keep the cursor in %s: %w", path, err)
	}
	return nil
}
