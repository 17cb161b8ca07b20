package postgres

import (
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.DeepWorkTx.

// InsertDeepWork implements hub.DeepWorkTx.
func (t *Tx) InsertDeepWork(d *hub.DeepWork) error {
	err := t.queryRow(`INSERT INTO deep_work (agent_id, mode, planned_activity, heartbeat_id, started_at, ends_at, state, ended_at, end_reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING id`,
		d.AgentID, string(d.Mode), d.PlannedActivity, d.HeartbeatID, row.Nanos(d.StartedAt), row.Nanos(d.EndsAt),
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason)).Scan(&d.ID)
	if errors.Is(err, pgx.ErrNoRows) { // deep_work_one_active, without aborting the transaction
		return hub.DeepWorkTaken()
	} else if err != nil {
		return fmt.Errorf("insert deep work: %w", err)
	}
	return nil
}

// UpdateDeepWork implements hub.DeepWorkTx.
func (t *Tx) UpdateDeepWork(d *hub.DeepWork) error {
	tag, err := t.exec(`UPDATE deep_work SET state = $1, ended_at = $2, end_reason = $3 WHERE id = $4`,
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason), d.ID)
	if err != nil {
		return fmt.Errorf("update deep work: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return hub.NoDeepWork(d.ID)
	}
	return nil
}

// ListDeepWork implements hub.DeepWorkTx.
func (t *Tx) ListDeepWork(q hub.DeepWorkQuery) ([]*hub.DeepWork, error) {
	rows, err := t.query(`SELECT `+row.DeepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE ($1::bigint = 0 OR d.agent_id = $1) AND ($2::text = '' OR d.state = $2)
		ORDER BY d.id DESC LIMIT NULLIF($3::bigint, 0)`, q.AgentID, string(q.State), q.Limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.DeepWork, error) { return row.DeepWork(r) })
	if err != nil {
		return nil, fmt.Errorf("list deep work: %w", err)
	}
	return out, nil
}

// deepWorks returns the declarations with the given IDs by ID. ENOTFOUND
// when one does not exist.
func (t *Tx) deepWorks(ids []int64) (map[int64]*hub.DeepWork, error) {
	out := make(map[int64]*hub.DeepWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT `+row.DeepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE d.id = ANY($1)`, ids)
	dws, err := scanRows(rows, err, func(r pgx.Rows) (*hub.DeepWork, error) { return row.DeepWork(r) })
	if err != nil {
		return nil, fmt.Errorf("read deep work: %w", err)
	}
	for _, d := range dws {
		out[d.ID] = d
	}
	for _, id := range ids {
		if out[id] == nil {
			return nil, hub.NoDeepWork(id)
		}
	}
	return out, nil
}
