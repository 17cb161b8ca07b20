package sqlite

import (
	"context"
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/storesql"
)

// This file implements hub.EventTx's write of many events in multi-row
// statements (storesql the rest).

// InsertEvents implements hub.EventTx.
func (t *Tx) InsertEvents(es []hub.Event) error {
	args := make([]any, 0, 4*len(es))
	for _, e := range es {
		var agent any
		if e.AgentID != 0 {
			agent = e.AgentID
		}
		args = append(args, agent, string(e.Kind), e.Detail, row.Nanos(e.CreatedAt))
	}
	return t.execRowsShared("insert events", `INSERT INTO events (agent_id, kind, detail, created_at) VALUES `, ``, 4, 1<<1|1<<3, args, nil)
}

// CountEvents returns how many events of kind the store holds.
func (db *DB) CountEvents(ctx context.Context, kind string) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, storesql.CountEvents, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, err)
	}
	return n, nil
}
