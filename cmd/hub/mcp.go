package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hooksock"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/version"
)

// bridgeGCPercent is the garbage collector's target of `hub mcp` when GOGC
// is not set. The bridge keeps about 1 MiB live, and each tool call leaves
// tens of KiB behind (mostly the MCP SDK's 32 KiB decoding buffers, two per
// call since lineTransport, five before), so at Go's default (100, with its
// 4 MiB floor) it collected every few calls. At 400 it collects a quarter
// as often, for about 12 MiB more resident memory (BENCHMARKS.md, "MCP").
const bridgeGCPercent = 400

// bridgeProcs is the number of processors `hub mcp` runs Go code on when
// GOMAXPROCS is not set. The bridge relays one agent's calls, one
// goroutine handing each to the next (stdin, the MCP SDK, gRPC's reader and
// writer): on one processor each hand-off stays on one thread, where with
// more the runtime wakes another thread for it, which cost more CPU per
// call than the work itself (BENCHMARKS.md, "MCP").
const bridgeProcs = 1

// runMCP runs the MCP stdio bridge for one agent: MCP on stdin/stdout, the
// hub over gRPC with the agent's token. Diagnostics go to stderr only.
func runMCP(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", mcpEnvOr("HUB_ADDR", "127.0.0.1:7700"), "the hub's gRPC address; env HUB_ADDR")
	token := fs.String("token", "", "this agent's token; env HUB_TOKEN (preferred: flags show in ps)")
	tokenFile := fs.String("token-file", "", "read the token from this file (beats env HUB_TOKEN; else env HUB_TOKEN_FILE)")
	wait := fs.Duration("wait-default", mcpbridge.DefaultWait, "wait_for_messages timeout when the model gives none (max 60s; keep it under the client's request time-out)")
	progress := fs.Duration("progress-interval", mcpbridge.DefaultProgressInterval, "progress notification period while a wait is parked")
	noChannel := fs.Bool("no-channel", os.Getenv("HUB_MCP_CHANNEL") == "off", "do not push messages as Claude Code channel notifications; env HUB_MCP_CHANNEL=off")
	join := fs.String("join", os.Getenv("HUB_JOIN_CODE"), "register this agent with a join code (from `hubctl join-codes create`) at the first start and keep its token in --token-file; later starts use the kept token. env HUB_JOIN_CODE")
	name := fs.String("name", os.Getenv("HUB_AGENT_NAME"), "the agent name to register with --join; env HUB_AGENT_NAME")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (to stderr)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub mcp [flags]

Serves MCP over stdio for one agent and calls the hub with its token.
Register it with your MCP client, e.g.
  claude mcp add hub --env HUB_TOKEN=<token> -- hub mcp
Or let it register itself once with a join code; the token is kept in a
0600 file ($XDG_CONFIG_HOME/agent-hub/NAME.token, or --token-file):
  claude mcp add hub -- hub mcp --join <code> --name NAME
While connected it pushes each new message, nudge and pulse as a Claude Code
channel notification; Claude Code shows them when launched with
  claude --dangerously-load-development-channels server:hub

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub mcp takes flags only", fs.Args())
	}
	logger, err := stderrLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(bridgeGCPercent)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(bridgeProcs)
	}

	var tok string
	if *join != "" {
		if *token != "" || os.Getenv("HUB_TOKEN") != "" {
			return fmt.Errorf("--join registers a new agent, but a token is set (HUB_TOKEN or --token): give one or the other")
		}
		tok, err = joinOnce(ctx, *addr, *join, *name, *tokenFile, stderr)
	} else {
		tok, err = hooklocal.AgentToken(*token, *tokenFile)
	}
	if err != nil {
		return err
	}
	if tok == "" {
		// Keep serving: the client shows the tools, and each call explains
		// how to set the token, which is clearer than a server that died.
		logger.Warn("no agent token: set HUB_TOKEN (printed by `hubctl agent add NAME`)")
	}
	if *wait > mcpbridge.MaxWait {
		return fmt.Errorf("--wait-default %v is above the 60s maximum", *wait)
	}
	return mcpbridge.RunStdio(ctx, *addr, tok, mcpbridge.Options{
		HubAddr:          *addr,
		Version:          version.Version(),
		DefaultWait:      *wait,
		ProgressInterval: *progress,
		Channel:          !*noChannel,
		HookSocket:       hookSocket(*addr, tok),
		HookOutput:       hook.Output,
		Logger:           logger,
	})
}

// hookSocket is where the bridge answers the hooks of the agent of tok
// (hub hook): none without a token, or with env HUB_HOOK_BRIDGE=off.
func hookSocket(addr, tok string) string {
	if tok == "" || os.Getenv("HUB_HOOK_BRIDGE") == "off" {
		return ""
	}
	return hooksock.Path(addr, tok)
}

func mcpEnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// joinOnce is the join step of `hub mcp --join`: it registers name with
// code at the first start and keeps the token in tokenFile (default
// mcpbridge.DefaultTokenFile), and returns the kept token afterwards.
func joinOnce(ctx context.Context, addr, code, name, tokenFile string, stderr io.Writer) (string, error) {
	if name == "" {
		return "", fmt.Errorf("--join needs --name: the agent name to register")
	}
	if tokenFile == "" {
		var err error
		if tokenFile, err = mcpbridge.DefaultTokenFile(name); err != nil {
			return "", err
		}
	}
	token, joined, err := mcpbridge.JoinOnce(ctx, hub.SystemClock{}, addr, code, name, tokenFile)
	if err != nil {
		return "", err
	}
	if joined {
		fmt.Fprintf(stderr, "hub mcp: registered agent %s with the join code; its token is kept in %s (later starts use it)\n", name, tokenFile)
	}
	return token, nil
}

// stderrLogger returns a text logger on stderr at the level named by level.
func stderrLogger(stderr io.Writer, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})), nil
}
