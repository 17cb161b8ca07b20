package postgres

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.EventTx.

// InsertEvent implements hub.EventTx.
func (t *Tx) InsertEvent(e *hub.Event) error {
	err := t.queryRow(`INSERT INTO events (agent_id, kind, detail, created_at) VALUES (NULLIF($1::bigint, 0), $2, $3, $4) RETURNING id`,
		e.AgentID, string(e.Kind), e.Detail, row.Nanos(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

// InsertEvents implements hub.EventTx.
func (t *Tx) InsertEvents(es []hub.Event) error {
	if len(es) == 0 {
		return nil
	}
	agents, created := make([]int64, len(es)), make([]int64, len(es))
	kinds, details := make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		agents[i], kinds[i], details[i], created[i] = e.AgentID, string(e.Kind), e.Detail, row.Nanos(e.CreatedAt)
	}
	_, err := t.exec(`INSERT INTO events (agent_id, kind, detail, created_at)
		SELECT NULLIF(agent_id, 0), kind, detail, created_at
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS v(agent_id, kind, detail, created_at, n)
		ORDER BY n`, agents, kinds, details, created)
	if err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

// ListEvents implements hub.EventTx.
func (t *Tx) ListEvents(q hub.EventQuery) ([]*hub.Event, error) {
	var since int64
	if !q.Since.IsZero() {
		since = q.Since.UnixNano()
	}
	// Newest first unless a cursor is given; the page is then put back in
	// ID order.
	order := `e.id DESC`
	if q.AfterID > 0 {
		order = `e.id`
	}
	rows, err := t.query(`SELECT * FROM (
			SELECT e.id, COALESCE(e.agent_id, 0), COALESCE(a.name, ''), e.kind, e.detail, e.created_at
			FROM events e LEFT JOIN agents a ON a.id = e.agent_id
			WHERE ($1::bigint = 0 OR e.agent_id = $1) AND ($2::text = '' OR e.kind = $2) AND e.created_at >= $3 AND e.id > $4
			ORDER BY `+order+` LIMIT NULLIF($5::bigint, 0)
		) page ORDER BY id`, q.AgentID, string(q.Kind), since, max(q.AfterID, 0), q.Limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.Event, error) {
		var e hub.Event
		var kind string
		var created int64
		if err := r.Scan(&e.ID, &e.AgentID, &e.AgentName, &kind, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.Kind, e.CreatedAt = hub.EventKind(kind), row.Time(created)
		return &e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
