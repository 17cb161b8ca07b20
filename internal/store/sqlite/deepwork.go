package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func (t *Tx) deepWorkByID(id int64) (*hub.DeepWork, error) {
	d, err := row.DeepWork(t.queryRow(`SELECT `+row.DeepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoDeepWork(id)
	}
	return d, err
}

// InsertDeepWork implements hub.DeepWorkTx.
func (t *Tx) InsertDeepWork(d *hub.DeepWork) error {
	res, err := t.exec(`INSERT INTO deep_work (agent_id, mode, planned_activity, heartbeat_id, started_at, ends_at, state, ended_at, end_reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.AgentID, string(d.Mode), d.PlannedActivity, d.HeartbeatID, row.Nanos(d.StartedAt), row.Nanos(d.EndsAt),
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason))
	if hub.ErrorCode(err) == hub.ECONFLICT {
		return hub.DeepWorkTaken()
	} else if err != nil {
		return fmt.Errorf("insert deep work: %w", err)
	}
	d.ID, err = res.LastInsertId()
	return err
}

// UpdateDeepWork implements hub.DeepWorkTx.
func (t *Tx) UpdateDeepWork(d *hub.DeepWork) error {
	res, err := t.exec(`UPDATE deep_work SET state = ?, ended_at = ?, end_reason = ? WHERE id = ?`,
		string(d.State), row.Nanos(d.EndedAt), string(d.EndReason), d.ID)
	if err != nil {
		return fmt.Errorf("update deep work: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return hub.NoDeepWork(d.ID)
	}
	return nil
}

// ListDeepWork implements hub.DeepWorkTx.
func (t *Tx) ListDeepWork(q hub.DeepWorkQuery) ([]*hub.DeepWork, error) {
	var where []string
	var args []any
	if q.AgentID != 0 {
		where, args = append(where, "d.agent_id = ?"), append(args, q.AgentID)
	}
	if q.State != "" {
		where, args = append(where, "d.state = ?"), append(args, string(q.State))
	}
	query := `SELECT ` + row.DeepWorkColumns + ` FROM deep_work d JOIN agents a ON a.id = d.agent_id`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY d.id DESC`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("list deep work: %w", err)
	}
	defer rows.Close()
	var out []*hub.DeepWork
	for rows.Next() {
		d, err := row.DeepWork(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// deepWorks returns the declarations with the given IDs by ID. ENOTFOUND
// when one does not exist (as deepWorkByID).
func (t *Tx) deepWorks(ids []int64) (map[int64]*hub.DeepWork, error) {
	out := make(map[int64]*hub.DeepWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT `+row.DeepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE d.id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("read deep work: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := row.DeepWork(rows)
		if err != nil {
			return nil, err
		}
		out[d.ID] = d
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if out[id] == nil {
			return nil, hub.NoDeepWork(id)
		}
	}
	return out, nil
}
