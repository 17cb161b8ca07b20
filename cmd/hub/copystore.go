package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agenthub/hub/internal/datadir"
	"github.com/agenthub/hub/internal/store/copystore"
)

// copyStore runs `hub copy-store`: a SQLite hub into an empty PostgreSQL
// database, with its progress on stderr.
func copyStore(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hub copy-store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hub copy-store --from DATA_DIR --to postgres://USER:PASSWORD@HOST:PORT/DB

Copies everything of a SQLite hub (agents and their tokens, messages with
their IDs and read state, channels, logs, checkpoints, deep work, events,
pulses, cron jobs and runs, settings) into an empty PostgreSQL database.
Stop the hub first: a data dir held by a running hub is refused, and so is
a target that holds any hub data. The admin token stays in the data dir's
admin.token: give it to the new replicas (--admin-token-file or the same
--data-dir).

Flags:
`)
		fs.PrintDefaults()
	}
	from := fs.String("from", datadir.Default(), "data dir of the SQLite hub to copy; env HUB_DATA_DIR")
	to := fs.String("to", os.Getenv("HUB_DATABASE_URL"), "PostgreSQL URL of the empty target database; env HUB_DATABASE_URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: hub copy-store takes --from and --to", fs.Args())
	}
	if *to == "" {
		return fmt.Errorf("copy-store: --to is required: the PostgreSQL URL to copy into (postgres://USER:PASSWORD@HOST:PORT/DB)")
	}
	fmt.Fprintf(stderr, "copy-store: copying the hub in %s\n", *from)
	return copystore.Copy(ctx, *from, *to, stderr)
}
