package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/hooksock"
)

const hookUsage = `Usage: hub hook HOST EVENT [flags]

What an agent host runs at points of its loop (hub setup writes these lines
into the host's settings): reads the host's hook JSON on stdin and answers in
the host's format.
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
with nothing new is answered there and costs the hub nothing; anything else
(something arrived, a stop, a permission request, a bridge not sure) goes to
the hub as without a bridge.

The hub and the agent: HUB_ADDR, and HUB_TOKEN or a token file, as hub mcp.

Flags:
`

// runHook runs `hub hook HOST EVENT`. It returns an error only for -h; every
// other problem is one warning line, and the host goes on.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", mcpEnvOr("HUB_ADDR", "127.0.0.1:7700"), "the hub's gRPC address; env HUB_ADDR")
	tokenFile := fs.String("token-file", "", "read the agent's token from this file (else env HUB_TOKEN, then HUB_TOKEN_FILE)")
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "how long to wait for the hub before giving up (the host waits for the hook)")
	approvalWait := hook.DefaultApprovalWait
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
		fmt.Fprint(fs.Output(), hookUsage)
		fs.PrintDefaults()
	}
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && len(pos) < 2 {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		hook.Fail(stdout, stderr, "%v; nothing done", err)
		return nil
	}
	pos = append(pos, fs.Args()...)
	if len(pos) != 2 {
		hook.Fail(stdout, stderr, "want HOST EVENT (e.g. hub hook claude Stop), got %q; nothing done", pos)
		return nil
	}
	h, ok := hook.Hosts[pos[0]]
	if !ok {
		var names []string
		for n := range hook.Hosts {
			names = append(names, n)
		}
		slices.Sort(names)
		hook.Fail(stdout, stderr, "unknown host %q (known: %s); nothing done", pos[0], strings.Join(names, ", "))
		return nil
	}
	tok, err := agentToken("", *tokenFile)
	if err != nil {
		hook.Fail(stdout, stderr, "%v; nothing injected", err)
		return nil
	}
	o := hook.Options{Addr: *addr, Token: tok, Timeout: *timeout, ApprovalWait: approvalWait}
	if !*noBridge && tok != "" {
		o.Socket = hooksock.Path(*addr, tok)
	}
	hook.Run(ctx, h, pos[1], stdin, stdout, stderr, o)
	return nil
}

// agentToken returns the agent token to use: one given on the command line
// (token, then the file tokenFile), else env HUB_TOKEN, else the file named
// by env HUB_TOKEN_FILE; "" when there is none.
func agentToken(token, tokenFile string) (string, error) {
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
