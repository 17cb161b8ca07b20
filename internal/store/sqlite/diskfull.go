package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// A full disk (or a database at --max-db-size) makes writes fail with
// SQLITE_FULL. The store answers them EUNAVAILABLE with "disk full" in
// words, reports DiskFull (the hub's /readyz turns not ready) and keeps
// serving reads; the first write that commits again clears it.

// DiskFull reports whether the last write failed because the disk (or the
// database's size limit) is full.
func (db *DB) DiskFull() bool { return db.full.Load() }

// outcome is the error a write reports: a full disk is translated and
// recorded, a success clears the record.
func (db *DB) outcome(err error) error {
	if err == nil {
		db.full.Store(false)
		return nil
	}
	if isFull(err) {
		db.full.Store(true)
		return hub.Errorf(hub.EUNAVAILABLE, "disk full: the hub cannot store this write (free space on the data dir's file system, or raise --max-db-size); reads still work, and writes resume by themselves once there is room")
	}
	return err
}

func isFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrFull
}

// limitSize caps the database at maxBytes (SQLite's max_page_count on the
// writer connection); 0 leaves it unbounded.
func (db *DB) limitSize(ctx context.Context, maxBytes int64) error {
	if maxBytes <= 0 {
		return nil
	}
	var pageSize int64
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return fmt.Errorf("read the page size: %w", err)
	}
	pages := max(1, maxBytes/pageSize)
	var got int64
	if err := db.w.QueryRowContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)).Scan(&got); err != nil {
		return fmt.Errorf("set the database size limit: %w", err)
	}
	return nil
}
