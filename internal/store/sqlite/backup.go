package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenthub/hub/internal/hub"
)

// Backup writes a consistent copy of the database to path and returns its
// size. It runs VACUUM INTO on a separate, short-lived
// connection: in WAL mode that is a read transaction on a snapshot, so the
// writer connection and its group commits go on meanwhile (running it on
// the writer would hold every write for the whole copy). The copy is a
// complete database (no WAL beside it) that a hub opens as its hub.db.
// Errors: ECONFLICT if path exists (nothing is overwritten).
func (db *DB) Backup(ctx context.Context, path string) (int64, error) {
	// Claim the name with an empty 0600 file (VACUUM INTO fills an empty
	// file and keeps its mode): the copy is never readable by others, and
	// an existing file is never overwritten.
	exists := hub.Errorf(hub.ECONFLICT, "backup to %s: the file already exists; choose a new file name", path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		return 0, exists
	case errors.Is(err, os.ErrNotExist):
		return 0, hub.Errorf(hub.EINVALID, "backup to %s: the directory %s does not exist on the hub's machine: create it first", path, filepath.Dir(path))
	case err != nil:
		return 0, hub.Errorf(hub.EINVALID, "backup to %s: %v", path, err)
	}
	f.Close()
	// Not a read-only open (mode=ro): SQLite would lock a read-only file
	// with fcntl, which in this process would release the store's lock on
	// the file (files.go); nor query_only, which refuses to write the copy.
	// VACUUM INTO only reads the database.
	conn, err := sql.Open("sqlite3", db.plainDSN)
	if err != nil {
		return 0, fmt.Errorf("backup: open a reader: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		if strings.Contains(err.Error(), "already exists") {
			return 0, exists
		}
		os.Remove(path) // a partial copy is no backup
		return 0, fmt.Errorf("backup to %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("backup to %s: %w", path, err)
	}
	return fi.Size(), nil
}
