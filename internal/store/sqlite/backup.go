package sqlite

import (
	"context"
	"fmt"
	"os"
)

// Backup writes a consistent copy of the database to path (VACUUM INTO, a
// read transaction: writers go on meanwhile) and returns its size.
func (db *DB) Backup(ctx context.Context, path string) (int64, error) {
	if _, err := db.w.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return 0, fmt.Errorf("backup to %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("backup to %s: %w", path, err)
	}
	return fi.Size(), nil
}
