// Package hooklocal is what a hook run (`hub hook HOST EVENT`) and a
// commit's guard check (`hub guard check`) settle on this machine, without
// the hub: the hosts' hook dialects and the hook's command line, the
// agent's bridge answering a tool use with nothing new, and a commit with
// nothing staged or the guard turned off.
//
// It links neither gRPC nor the generated API, whose package
// initialisation is most of a hub command's start: hub-hook, the binary
// the hosts' hooks and the pre-commit guard run, answers from here and
// hands whatever needs the hub to the hub binary beside it (Exec).
package hooklocal

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
)

// DefaultTimeout bounds a hook run's wait for the hub: the host waits for
// the hook, so a hub that hangs costs the agent at most this much at each
// hook (one that is down refuses the connection at once). It is a wall
// clock budget, and on a loaded machine the hook's own process waits for
// a core: a run at load ~25 took 770 ms, and a budget near the fast
// path's (170 ms) gave up on answers the hub had in time, so a message
// posted between two tool calls reached the model requests later. Two
// seconds stays below every host time-out hub setup writes (Codex's
// SessionEnd allows 3 s). An injection the hook gives up on is, but for a
// commit that ends right at the deadline, not lost: the hub moves the
// cursor only while the caller still waits, so the next hook shows those
// messages.
const DefaultTimeout = 2 * time.Second

// DefaultApprovalWait is how long a permission request waits for a
// person's answer before the host shows its own prompt.
const DefaultApprovalWait = 60 * time.Second

// MaxInput bounds what is read of the host's JSON (a tool's output can be
// large; the hook needs a few fields).
const MaxInput = 4 << 20

// Step is what the hub is asked at an event.
type Step int

// The steps.
const (
	SessionStart Step = iota + 1 // who am I, unread counts, deep work
	Inject                       // what is new since the last injection
	Stop                         // may the turn end
	Approval                     // a person's allow or deny
	NeedsInput                   // the agent waits at its prompt
	SessionEnd                   // the session ended: offline at once
)

// Host is an agent host's hook dialect: its event names and how it takes
// additional context and a held stop.
type Host struct {
	Name   string
	Events map[string]Step
	// Block is the decision value that holds a stop.
	Block string
	// Quiet is printed when there is nothing to say ("" prints nothing).
	Quiet string
}

// Hosts are the hosts `hub hook` speaks to, by name.
var Hosts = map[string]Host{
	"claude": {Name: "claude", Block: "block", Events: claudeEvents},
	"codex":  {Name: "codex", Block: "block", Events: claudeEvents},
	"gemini": {Name: "gemini", Block: "deny", Quiet: "{}", Events: map[string]Step{
		"SessionStart": SessionStart,
		"BeforeAgent":  Inject,
		"AfterTool":    Inject,
		"AfterAgent":   Stop,
		"SessionEnd":   SessionEnd,
	}},
}

var claudeEvents = map[string]Step{
	"SessionStart":       SessionStart,
	"UserPromptSubmit":   Inject,
	"PostToolUse":        Inject,
	"PostToolUseFailure": Inject, // Claude Code: the call ran and failed
	"Stop":               Stop,
	"PermissionRequest":  Approval,
	"Notification":       NeedsInput,
	"SessionEnd":         SessionEnd,
}

// EventNames lists h's events, in the order of a host's loop.
func EventNames(h Host) string {
	var names []string
	for _, n := range []string{"SessionStart", "UserPromptSubmit", "BeforeAgent", "PostToolUse", "PostToolUseFailure", "AfterTool", "Stop", "AfterAgent", "PermissionRequest", "Notification", "SessionEnd"} {
		if _, ok := h.Events[n]; ok {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Options configure one hook run.
type Options struct {
	Addr    string        // the hub's gRPC address
	Token   string        // the agent's token
	Timeout time.Duration // DefaultTimeout if zero
	// ApprovalWait is how long a permission request waits for a person
	// (0: it is not relayed, and the host asks at once).
	ApprovalWait time.Duration
	// Socket is where the agent's bridge (hub mcp) answers its hooks on
	// this machine (hooksock.Path); the hook asks it first and the hub
	// only when the bridge sends it there or does not answer. "": the hub
	// alone.
	Socket string
}

// Fail is a hook run that cannot start (bad flags, no host, an unreadable
// token file): one warning line on stderr and an empty JSON object on
// stdout, which every host reads as "nothing to say" (Gemini CLI turns
// stderr into a system message when stdout is empty).
func Fail(stdout, stderr io.Writer, format string, args ...any) {
	fmt.Fprintf(stderr, "hub hook: warning: "+format+"\n", args...)
	fmt.Fprintln(stdout, "{}")
}

// HookUsage is the help of `hub hook`.
const HookUsage = `Usage: hub hook HOST EVENT [flags]

What an agent host runs at points of its loop (hub setup writes these lines
into the host's settings, running hub-hook, the hook's own small binary,
when it is installed beside hub): reads the host's hook JSON on stdin and
answers in the host's format.
  HOST claude or codex: SessionStart, UserPromptSubmit, PostToolUse,
                        PostToolUseFailure (Claude Code), Stop,
                        PermissionRequest, Notification, SessionEnd
  HOST gemini:          SessionStart, BeforeAgent, AfterTool, AfterAgent,
                        SessionEnd
Session start says who the agent is, its unread counts and deep work; a prompt
or a tool use injects the messages new since the last injection (the cursor
lives in the hub); a stop is held while direct messages or mentions are
unread, a few times in a row at most. A permission request goes to the
people's inbox (the dashboard, hubctl inbox) and waits --approval-wait for an
allow or deny; unanswered, it prints nothing and the host asks in the
terminal. The host may show its own prompt meanwhile: the call's PostToolUse
(or PostToolUseFailure) closes the item as answered at the terminal, and the
waiting hook exits at once with no decision. The hub's own MCP tools
(mcp__hub__*) are allowed at once, never asked about. A notification or a
stop marks the agent waiting for a person until its next prompt or tool use.
Whatever fails, the hook exits 0 with one line on stderr and {} on stdout, so
the host goes on.

When the agent's hub mcp runs on this machine, the hook asks it first, over a
user-only Unix socket ($XDG_RUNTIME_DIR/agent-hub): a prompt or a tool use
with nothing new is answered there and costs the hub nothing; one with
something new, a notification, a stop, a session's end, a permission request
and the prompt or tool use after a host event are answered there too, the
bridge asking the hub on the stream it holds (a permission request's hook
waiting for it as for a person; killed meanwhile, the approval is left to the
terminal); anything else (a session's start, a bridge not sure) goes to the
hub as without a bridge.

The hub and the agent: HUB_ADDR, and HUB_TOKEN or a token file, as hub mcp.

Flags:
`

// ParseHook reads the command line of `hub hook` (args after "hook") and
// the environment. ok false: the run is over, its failure already
// written (Fail) or, with flag.ErrHelp, its help.
func ParseHook(args []string, stdout, stderr io.Writer) (h Host, event string, o Options, ok bool, err error) {
	fs := flag.NewFlagSet("hub hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("HUB_ADDR", "127.0.0.1:7700"), "the hub's gRPC address; env HUB_ADDR")
	tokenFile := fs.String("token-file", "", "read the agent's token from this file (else env HUB_TOKEN, then HUB_TOKEN_FILE)")
	timeout := fs.Duration("timeout", DefaultTimeout, "how long to wait for the hub before giving up (the host waits for the hook)")
	approvalWait := DefaultApprovalWait
	if v := os.Getenv("HUB_APPROVAL_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(stderr, "hub hook: warning: HUB_APPROVAL_WAIT=%q is not a duration such as 60s or 0 (do not relay); using %v\n", v, approvalWait)
		} else {
			approvalWait = d
		}
	}
	noBridge := fs.Bool("no-bridge", os.Getenv("HUB_HOOK_BRIDGE") == "off", "ask the hub even when the agent's hub mcp runs on this machine; env HUB_HOOK_BRIDGE=off")
	fs.DurationVar(&approvalWait, "approval-wait", approvalWait, "how long a PermissionRequest waits for a person's answer in the hub's inbox before the host asks in the terminal (0: do not relay); env HUB_APPROVAL_WAIT")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), HookUsage)
		fs.PrintDefaults()
	}
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && len(pos) < 2 {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return h, "", o, false, err
		}
		Fail(stdout, stderr, "%v; nothing done", err)
		return h, "", o, false, nil
	}
	pos = append(pos, fs.Args()...)
	if len(pos) != 2 {
		Fail(stdout, stderr, "want HOST EVENT (e.g. hub hook claude Stop), got %q; nothing done", pos)
		return h, "", o, false, nil
	}
	h, known := Hosts[pos[0]]
	if !known {
		var names []string
		for n := range Hosts {
			names = append(names, n)
		}
		slices.Sort(names)
		Fail(stdout, stderr, "unknown host %q (known: %s); nothing done", pos[0], strings.Join(names, ", "))
		return h, "", o, false, nil
	}
	tok, err := AgentToken("", *tokenFile)
	if err != nil {
		Fail(stdout, stderr, "%v; nothing injected", err)
		return h, "", o, false, nil
	}
	o = Options{Addr: *addr, Token: tok, Timeout: *timeout, ApprovalWait: approvalWait}
	if !*noBridge && tok != "" {
		o.Socket = hooksock.Path(*addr, tok)
	}
	return h, pos[1], o, true, nil
}

// envOr returns the environment variable name, or def when it is empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// AgentToken returns the agent token to use: one given on the command line
// (token, then the file tokenFile), else env HUB_TOKEN, else the file named
// by env HUB_TOKEN_FILE; "" when there is none.
func AgentToken(token, tokenFile string) (string, error) {
	if token != "" {
		return token, nil
	}
	if tokenFile == "" {
		if t := os.Getenv("HUB_TOKEN"); t != "" {
			return t, nil
		}
		tokenFile = os.Getenv("HUB_TOKEN_FILE")
	}
	if tokenFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// AskBridge asks the agent's bridge on this machine about the hook run of
// step of host h, when o names its socket, and returns its reply (Answer
// "" when no bridge answered). in is the host's input (nil: not read): a
// prompt, a tool use, a notification with its note (HostNote), a stop, a
// session's end and a permission request for a tool take a printed
// answer, which the bridge gives when it asked the hub what the hook would
// (the note and the injection, the stop's check, the end, the approval) on
// its stream; a permission request's waits for a person (o.ApprovalWait)
// and ApprovalMargin more. After AnswerHub the hook asks the
// hub and, once the hub has answered, tells the session Synced; after
// AnswerPrint it prints Output and then tells the session Synced. The
// session is nil for AnswerQuiet and no answer.
func AskBridge(ctx context.Context, h Host, step Step, event string, in *Input, o Options) (*hooksock.Session, hooksock.Reply) {
	if o.Socket == "" {
		return nil, hooksock.Reply{}
	}
	q := hooksock.Query{Token: o.Token, Step: hooksock.StepOther, Event: event}
	if step == Inject {
		q.Step = hooksock.StepInject
	}
	if in != nil {
		if n, ok := HostNote(step, *in); ok {
			q.Note = &n
		}
		switch step {
		case Stop:
			q.Stop = &hooksock.Stop{Continuing: in.StopHookActive}
		case SessionEnd:
			q.End = true
		case Approval:
			if in.ToolName != "" {
				a := ApprovalRequest(*in, o.ApprovalWait)
				q.Approval = &a
			}
		}
	}
	wait := hooksock.ConnectTimeout
	switch {
	case q.Approval != nil:
		q.Print, q.Host = true, h.Name
		wait += o.ApprovalWait + ApprovalMargin
	case step == Inject || q.Note != nil || q.Stop != nil || q.End:
		q.Print, q.Host = true, h.Name
		wait += hooksock.PrintWait
	}
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	rep, s, err := hooksock.Ask(actx, o.Socket, q)
	if err != nil {
		return nil, hooksock.Reply{}
	}
	if rep.Answer == hooksock.AnswerQuiet {
		s.Close()
		return nil, rep
	}
	return s, rep
}

// Answered answers the hook run of host h for event when it can without
// the hub: a notification that asks nothing of a person (the host's quiet
// answer), or a prompt, a tool use, a notification, a stop, a session's
// end or a permission request the agent's bridge answers: nothing new
// (quiet), or the output it gives (AnswerPrint: printed as it is). It
// reads the host's JSON first (the host writes it whole) and reports true
// with the run's exit status. False: only the hub can answer the run (any
// other event, a permission request the hub binary answers alone: for
// none of the hub's own tools, not relayed; no bridge, a bridge not
// sure); read is then what was read of stdin (nil: nothing), which the
// hub run in this process's place is to read first.
func Answered(ctx context.Context, h Host, event string, stdin io.Reader, stdout io.Writer, o Options) (exit int, ok bool, read []byte) {
	step := h.Events[event]
	if step != Inject && step != NeedsInput && step != Stop && step != SessionEnd && (step != Approval || o.ApprovalWait <= 0) ||
		o.Token == "" || o.Socket == "" {
		return 0, false, nil
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if step == Approval {
		timeout += o.ApprovalWait + ApprovalMargin
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var in Input
	read, complete := ReadInput(ctx, stdin, &in)
	if !complete {
		return 0, false, nil // out of time: the hub reads what is left, and gives up too
	}
	if _, noted := HostNote(step, in); !noted && step == NeedsInput {
		return quiet(h, stdout), true, nil
	}
	if step == Approval && (in.ToolName == "" || OwnTool(in.ToolName)) {
		return 0, false, read
	}
	s, rep := AskBridge(ctx, h, step, event, &in, o)
	switch rep.Answer {
	case hooksock.AnswerQuiet:
		return quiet(h, stdout), true, nil
	case hooksock.AnswerPrint:
		defer s.Close()
		if _, err := io.WriteString(stdout, rep.Output); err == nil {
			s.Synced() // printed: the bridge confirms what it shows
		}
		return rep.Exit, true, nil
	case hooksock.AnswerHub:
		s.Close()
	}
	return 0, false, read
}

// quiet prints h's answer when there is nothing to say, and returns the
// run's exit status.
func quiet(h Host, stdout io.Writer) int {
	if h.Quiet != "" {
		fmt.Fprintln(stdout, h.Quiet)
	}
	return 0
}

// Beside returns the path of the executable file name in the directory of
// the running binary (links resolved): how hub and hub-hook, installed
// side by side, find each other.
func Beside(name string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("find this binary: %w", err)
	}
	return Sibling(exe, name)
}

// Sibling returns the path of the executable file name in the directory
// of the file path.
func Sibling(path, name string) (string, error) {
	p := filepath.Join(filepath.Dir(path), name)
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", p)
	}
	return p, nil
}
