package main

import (
	"context"
	"io"

	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/hooklocal"
)

// runHook runs `hub hook HOST EVENT`. It returns an error only for -h; every
// other problem is one warning line, and the host goes on.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	h, event, o, ok, err := hooklocal.ParseHook(args, stdout, stderr)
	if !ok {
		return err
	}
	hook.Run(ctx, h, event, stdin, stdout, stderr, o)
	return nil
}
