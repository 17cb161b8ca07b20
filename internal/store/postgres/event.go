package postgres

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.EventTx's write of many events in one
// statement (storesql the rest).

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
