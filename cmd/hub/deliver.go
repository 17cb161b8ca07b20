package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenthub/hub/internal/deliver"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/mcpbridge"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// runDeliver runs the tmux sidecar for one agent: it long-polls the hub
// with the agent's token and pastes pulses, nudges and the agent's messages
// into its pane when the pane is idle.
func runDeliver(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub deliver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("tmux", "", "the agent's tmux pane (session:window.pane or %id); required")
	socket := fs.String("tmux-socket", "", "the tmux server's socket name (tmux -L); default: the default server")
	addr := fs.String("addr", mcpEnvOr("HUB_ADDR", "127.0.0.1:7700"), "the hub's gRPC address; env HUB_ADDR")
	token := fs.String("token", "", "the agent's token; env HUB_TOKEN (preferred: flags show in ps)")
	tokenFile := fs.String("token-file", os.Getenv("HUB_TOKEN_FILE"), "read the token from this file (e.g. the one hub mcp --join keeps); env HUB_TOKEN_FILE")
	cursorFile := fs.String("cursor-file", "", "where the newest handled message ID is kept (default: beside --token-file, else $XDG_CONFIG_HOME/agent-hub/NAME.deliver-cursor)")
	idle := fs.Duration("idle", deliver.DefaultIdle, "paste only after the pane has shown the same screen this long")
	expect := fs.String("expect", strings.Join(deliver.DefaultExpect, ","), "comma-separated programs (names or patterns) the pane must run for anything to be pasted; tmux display -p -t PANE '#{pane_current_command}' shows the pane's")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error (to stderr)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub deliver --tmux TARGET [flags]

Runs beside an agent that has no hooks: long-polls the hub as that agent
(HUB_ADDR, HUB_TOKEN) and, when the agent's tmux pane has been idle for a
few seconds, pastes its pulses, nudges and the messages addressed to it
into the pane, as one line framed as a notice from the hub, and presses
Enter. Only into a pane whose program is on --expect (the agent hosts by
default): never into a shell, nor into script, sudo, ssh or another
program that may hide one. The text is pasted (bracketed paste), never
typed as keys, without control characters, and the pane is looked at again
before Enter. Messages stay unread; the agent reads them with its tools.
  HUB_TOKEN=<token> hub deliver --tmux agents:0.0
  HUB_TOKEN=<token> hub deliver --tmux agents:0.0 --expect node   # an agent tmux shows as node

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub deliver takes flags only", fs.Args())
	}
	if *target == "" {
		return fmt.Errorf("--tmux is required: the agent's pane, e.g. --tmux agents:0.0 (tmux list-panes -a lists them)")
	}
	exp, err := deliver.ParseExpect(*expect)
	if err != nil {
		return err
	}
	logger, err := stderrLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	tok, err := hooklocal.AgentToken(*token, *tokenFile)
	if err != nil {
		return err
	}
	if tok == "" {
		return fmt.Errorf("no agent token: set HUB_TOKEN (printed by `hubctl agent add NAME`) or --token-file")
	}
	if *cursorFile == "" && *tokenFile != "" {
		*cursorFile = strings.TrimSuffix(*tokenFile, ".token") + ".deliver-cursor"
	}
	conn, err := mcpbridge.Dial(*addr, tok)
	if err != nil {
		return err
	}
	defer conn.Close()
	return deliver.Run(ctx, hubv1.NewAgentServiceClient(conn), deliver.Options{
		Tmux:       deliver.Tmux{Target: *target, Socket: *socket},
		Expect:     exp,
		CursorFile: *cursorFile,
		Idle:       *idle,
		Logger:     logger,
	})
}
