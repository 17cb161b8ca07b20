package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/agenthub/hub/internal/hooklocal"
)

// runOtelHeaders runs `hub otel-headers`: the header with which a host's
// telemetry export names its agent to the hub's OTLP receiver, read from
// the agent's token file each time (Claude Code's otelHeadersHelper,
// Codex's otel.headers_helper), so that no settings file holds the token.
func runOtelHeaders(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub otel-headers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tokenFile := fs.String("token-file", "", "read the agent's token from this file (else env HUB_TOKEN, then HUB_TOKEN_FILE)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub otel-headers --token-file FILE

Prints {"Authorization": "Bearer <agent token>"}: the headers of an agent
host's OpenTelemetry export to the hub (/otlp), as the host's headers helper
asks (Claude Code's otelHeadersHelper, Codex's otel.headers_helper; hub setup
writes both).

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub otel-headers takes flags only", fs.Args())
	}
	tok, err := hooklocal.AgentToken("", *tokenFile)
	if err != nil {
		return err
	}
	if tok == "" {
		return fmt.Errorf("no agent token: give --token-file (hub setup writes it)")
	}
	b, err := json.Marshal(map[string]string{"Authorization": "Bearer " + tok})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
