package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.RetireTx's reading of candidates; each store
// writes the retirements (a list of IDs its own way).

// silence is the time an agent has been silent since: its last call, or
// its creation when it never called (last_seen_at 0). It is written
// exactly as the index agents_silence (0022_retire_silence.sql) is, so
// that the index serves the query.
const silence = `(CASE WHEN a.last_seen_at > a.created_at THEN a.last_seen_at ELSE a.created_at END)`

// RetireCandidates implements hub.RetireTx: a range of the index
// agents_silence, the longest silent first.
func (x Statements) RetireCandidates(cutoff, now time.Time, limit int) ([]hub.RetireCandidate, error) {
	out, err := all(x.DB, func(s row.Scanner) (hub.RetireCandidate, error) {
		var c hub.RetireCandidate
		var seen, created int64
		err := s.Scan(&c.AgentID, &c.Name, &seen, &created)
		c.LastSeenAt, c.CreatedAt = row.Time(seen), row.Time(created)
		return c, err
	}, `SELECT a.id, a.name, a.last_seen_at, a.created_at FROM agents a
		WHERE a.retired_at = 0 AND a.disabled_at = 0 AND `+silence+` < ?
		AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.agent_id = a.id AND r.expires_at > ?)
		AND NOT EXISTS (SELECT 1 FROM tasks k WHERE k.assignee_id = a.id AND k.state = 'claimed')
		ORDER BY `+silence+` LIMIT ?`, row.Nanos(cutoff), row.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("retirement candidates: %w", err)
	}
	return out, nil
}
