package sqlite

import (
	"errors"
	"fmt"
	"os"
)

// createPrivate creates path empty with mode 0600 if it does not exist.
// SQLite keeps an existing file's mode and gives its -wal and -shm files
// the database file's mode, so creating the database this way keeps all
// three private to the hub's user.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}
