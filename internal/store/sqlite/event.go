package sqlite

import (
	"context"
	"fmt"

	"github.com/agenthub/hub/internal/store/storesql"
)

// CountEvents returns how many events of kind the store holds.
func (db *DB) CountEvents(ctx context.Context, kind string) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, storesql.CountEvents, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, err)
	}
	return n, nil
}
