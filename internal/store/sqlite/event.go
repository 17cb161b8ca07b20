package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// InsertEvent implements hub.EventTx.
func (t *Tx) InsertEvent(e *hub.Event) error {
	var agent any
	if e.AgentID != 0 {
		agent = e.AgentID
	}
	res, err := t.exec(`INSERT INTO events (agent_id, kind, detail, created_at) VALUES (?, ?, ?, ?)`,
		agent, string(e.Kind), e.Detail, row.Nanos(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	e.ID, err = res.LastInsertId()
	return err
}

// ListEvents implements hub.EventTx.
func (t *Tx) ListEvents(q hub.EventQuery) ([]*hub.Event, error) {
	var where []string
	var args []any
	if q.AgentID != 0 {
		where, args = append(where, "e.agent_id = ?"), append(args, q.AgentID)
	}
	if q.Kind != "" {
		where, args = append(where, "e.kind = ?"), append(args, string(q.Kind))
	}
	if !q.Since.IsZero() {
		where, args = append(where, "e.created_at >= ?"), append(args, q.Since.UnixNano())
	}
	if q.AfterID > 0 {
		where, args = append(where, "e.id > ?"), append(args, q.AfterID)
	}
	query := `SELECT e.id, COALESCE(e.agent_id, 0), COALESCE(a.name, ''), e.kind, e.detail, e.created_at
		FROM events e LEFT JOIN agents a ON a.id = e.agent_id`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	newestFirst := q.AfterID == 0
	if newestFirst {
		query += ` ORDER BY e.id DESC`
	} else {
		query += ` ORDER BY e.id`
	}
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []*hub.Event
	for rows.Next() {
		var e hub.Event
		var kind string
		var created int64
		if err := rows.Scan(&e.ID, &e.AgentID, &e.AgentName, &kind, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.Kind, e.CreatedAt = hub.EventKind(kind), row.Time(created)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if newestFirst {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

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
