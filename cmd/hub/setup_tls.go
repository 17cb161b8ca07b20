package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agenthub/hub/internal/castore"
)

// pinCA fetches the CA of the hub at addr over TLS, checks it against
// fingerprint and keeps it for addr (castore), so that what setup writes
// (hub mcp, hub hook) and setup's own calls talk TLS to that hub. A CA
// with another fingerprint is refused before anything is written; a dry
// run checks it and keeps nothing.
func pinCA(ctx context.Context, addr, fingerprint string, dryRun bool, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	caPEM, err := castore.Fetch(ctx, addr, fingerprint)
	if err != nil {
		return err
	}
	if dryRun {
		path, err := castore.File(addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: the CA of the hub at %s, checked against its fingerprint, kept when run without --dry-run\n", path, addr)
		return nil
	}
	path, err := castore.Store(addr, caPEM)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: the CA of the hub at %s, checked against its fingerprint\n", path, addr)
	return nil
}
