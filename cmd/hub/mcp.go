package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/version"
)

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
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (to stderr)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub mcp [flags]

Serves MCP over stdio for one agent and calls the hub with its token.
Register it with your MCP client, e.g.
  claude mcp add hub --env HUB_TOKEN=<token> -- hub mcp
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
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))

	tok, err := agentToken(*token, *tokenFile)
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
		Version:          version.Version,
		DefaultWait:      *wait,
		ProgressInterval: *progress,
		Channel:          !*noChannel,
		Logger:           logger,
	})
}

func mcpEnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
