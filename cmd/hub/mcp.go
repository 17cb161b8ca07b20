package main

import (
	"context"
	"errors"
	"io"
)

// runMCP runs the MCP stdio bridge (issue 3 wires it here).
func runMCP(ctx context.Context, args []string, stderr io.Writer) error {
	return errors.New("hub mcp: not built yet")
}
