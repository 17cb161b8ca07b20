package storesql

import (
	"fmt"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.EventTx.

// CountEvents counts the events of one kind: an index-only count
// (events_kind), which each store runs outside a transaction, for metrics
// such as nudges and pulses sent (read from the event log, they survive
// restarts).
const CountEvents = `SELECT COUNT(*) FROM events WHERE kind = ?`

// nullID is an agent reference: NULL for none.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// InsertEvent implements hub.EventTx.
func (x Statements) InsertEvent(e *hub.Event) error {
	err := x.DB.QueryRow(`INSERT INTO events (agent_id, kind, detail, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		nullID(e.AgentID), string(e.Kind), e.Detail, row.Nanos(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

// InsertEvents implements hub.EventTx: their IDs follow their order.
func (x Statements) InsertEvents(es []hub.Event) error {
	rows := make([]any, 0, 4*len(es))
	for _, e := range es {
		rows = append(rows, nullID(e.AgentID), string(e.Kind), e.Detail, row.Nanos(e.CreatedAt))
	}
	return x.DB.ExecRows(Batch{What: "insert events", Head: `INSERT INTO events (agent_id, kind, detail, created_at) `,
		Types: []string{"bigint", "text", "text", "bigint"}, Same: 1<<1 | 1<<3}, rows, nil)
}

// ListEvents implements hub.EventTx: newest first unless a cursor is
// given; the page is then put back in ID order.
func (x Statements) ListEvents(q hub.EventQuery) ([]*hub.Event, error) {
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
	newestFirst := q.AfterID <= 0
	if newestFirst {
		query += ` ORDER BY e.id DESC`
	} else {
		query += ` ORDER BY e.id`
	}
	if q.Limit > 0 {
		query, args = query+` LIMIT ?`, append(args, q.Limit)
	}
	out, err := all(x.DB, func(s row.Scanner) (*hub.Event, error) {
		var e hub.Event
		var kind string
		var created int64
		if err := s.Scan(&e.ID, &e.AgentID, &e.AgentName, &kind, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.Kind, e.CreatedAt = hub.EventKind(kind), row.Time(created)
		return &e, nil
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if newestFirst {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}
