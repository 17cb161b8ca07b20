package sqlite

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentPathTx's write of paths (storesql the
// rest of 0018_delivery's statements).

// PutPaths implements hub.AgentPathTx: one process owns the file, so its
// clock (now) stamps the rows.
func (t *Tx) PutPaths(rows []hub.PathRow, now time.Time) error {
	for _, r := range rows {
		_, err := t.exec(`INSERT INTO agent_paths (agent_id, via, last_seen_at, live_until, replica, written_at)
			SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM agents WHERE id = ?1)
			ON CONFLICT (agent_id, via) DO UPDATE SET
				last_seen_at = MAX(last_seen_at, excluded.last_seen_at),
				live_until = CASE WHEN replica = excluded.replica OR live_until < excluded.live_until OR live_until <= ?6
					THEN excluded.live_until ELSE live_until END,
				replica = CASE WHEN replica = excluded.replica OR live_until < excluded.live_until OR live_until <= ?6
					THEN excluded.replica ELSE replica END,
				written_at = excluded.written_at`,
			r.AgentID, int64(r.Via), row.Nanos(r.LastSeenAt), row.Nanos(r.LiveUntil), r.Replica, row.Nanos(now))
		if err != nil {
			return err
		}
	}
	return nil
}
