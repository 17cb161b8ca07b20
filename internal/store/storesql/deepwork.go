package storesql

import (
	"fmt"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.DeepWorkTx.

const deepWorkFrom = `SELECT ` + row.DeepWorkColumns + ` FROM deep_work d JOIN agents a ON a.id = d.agent_id `

// DeepWorkByID returns declaration id; ENOTFOUND when there is none.
func (x Statements) DeepWorkByID(id int64) (*hub.DeepWork, error) {
	d, err := row.DeepWork(x.DB.QueryRow(deepWorkFrom+`WHERE d.id = ?`, id))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoDeepWork(id)
	}
	return d, err
}

// InsertDeepWork implements hub.DeepWorkTx. An agent's second active
// declaration (deep_work_one_active) is reported without aborting the
// transaction.
func (x Statements) InsertDeepWork(d *hub.DeepWork) error {
	err := x.DB.QueryRow(`INSERT INTO deep_work (agent_id, mode, planned_activity, heartbeat_id, started_at, ends_at, state, ended_at, end_reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		d.AgentID, string(d.Mode), d.PlannedActivity, d.HeartbeatID, row.Nanos(d.StartedAt), row.Nanos(d.EndsAt),
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason)).Scan(&d.ID)
	if x.DB.IsNoRows(err) {
		return hub.DeepWorkTaken()
	} else if err != nil {
		return fmt.Errorf("insert deep work: %w", err)
	}
	return nil
}

// UpdateDeepWork implements hub.DeepWorkTx.
func (x Statements) UpdateDeepWork(d *hub.DeepWork) error {
	n, err := x.DB.Exec(`UPDATE deep_work SET state = ?, ended_at = ?, end_reason = ? WHERE id = ?`,
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason), d.ID)
	if err != nil {
		return fmt.Errorf("update deep work: %w", err)
	}
	if n == 0 {
		return hub.NoDeepWork(d.ID)
	}
	return nil
}

// DeepWorkDeclarations implements hub.DeepWorkTx.
func (x Statements) DeepWorkDeclarations(q hub.DeepWorkQuery) ([]*hub.DeepWork, error) {
	var where []string
	var args []any
	if q.AgentID != 0 {
		where, args = append(where, "d.agent_id = ?"), append(args, q.AgentID)
	}
	if q.State != "" {
		where, args = append(where, "d.state = ?"), append(args, string(q.State))
	}
	query := deepWorkFrom
	if len(where) > 0 {
		query += `WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY d.id DESC`
	if q.Limit > 0 {
		query, args = query+` LIMIT ?`, append(args, q.Limit)
	}
	out, err := all(x.DB, row.DeepWork, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list deep work: %w", err)
	}
	return out, nil
}

// DeepWorks returns the declarations with the given IDs by ID; ENOTFOUND
// when one does not exist.
func (x Statements) DeepWorks(ids []int64) (map[int64]*hub.DeepWork, error) {
	out := make(map[int64]*hub.DeepWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	dws, err := all(x.DB, row.DeepWork, deepWorkFrom+`WHERE `+x.Dialect.InIDs("d.id"), x.Dialect.IDs(ids))
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
