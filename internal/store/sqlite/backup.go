package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/agenthub/hub/internal/hub"
)

// Backup writes a consistent copy of the database to path and returns its
// size. It runs VACUUM INTO on a separate, short-lived read-only
// connection: in WAL mode that is a read transaction on a snapshot, so the
// writer connection and its group commits go on meanwhile (running it on
// the writer would hold every write for the whole copy). The copy is a
// complete database (no WAL beside it) that a hub opens as its hub.db.
// Errors: ECONFLICT if path exists (nothing is overwritten).
func (db *DB) Backup(ctx context.Context, path string) (int64, error) {
	// Checked before (VACUUM INTO would fill an existing empty file) and
	// after (a file created meanwhile).
	exists := hub.Errorf(hub.ECONFLICT, "backup to %s: the file already exists; choose a new file name", path)
	if _, err := os.Stat(path); err == nil {
		return 0, exists
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("backup to %s: %w", path, err)
	}
	v := url.Values{}
	v.Set("mode", "ro")
	v.Set("_busy_timeout", "5000")
	conn, err := sql.Open("sqlite3", "file:"+db.path+"?"+v.Encode())
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
