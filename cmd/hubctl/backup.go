package main

import (
	"context"
	"fmt"
	"path/filepath"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// runBackup asks the hub for an online backup (AdminService.Backup, VACUUM
// INTO on a read snapshot: writes go on meanwhile). The hub writes FILE on
// its own machine; a relative FILE is made absolute here, against hubctl's
// working directory, which is right when hubctl runs beside the hub.
func runBackup(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("backup")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return usageErrorf("give the FILE to write the backup to (a new file, on the hub's machine)")
	}
	path, err := filepath.Abs(pos[0])
	if err != nil {
		return fmt.Errorf("backup file %q: %w", pos[0], err)
	}
	r, err := c.admin.Backup(ctx, &hubv1.BackupRequest{Path: path})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "backup written to %s (%s)\n", r.GetPath(), fmtBytes(r.GetBytes()))
	fmt.Fprintf(c.out, "to restore: stop the hub, put this file in its data dir as hub.db (remove hub.db-wal and hub.db-shm), start the hub\n")
	return nil
}

// fmtBytes formats a size for people: 512 B, 1.5 KiB, 48.0 MiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
