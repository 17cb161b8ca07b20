package sqlite

import (
	"context"
	"fmt"
)

// CountEvents returns how many events of kind the store holds: an
// index-only count (events_kind), for metrics such as nudges and pulses
// sent, which survive restarts because they are read from the event log.
func (db *DB) CountEvents(ctx context.Context, kind string) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE kind = ?`, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, err)
	}
	return n, nil
}
