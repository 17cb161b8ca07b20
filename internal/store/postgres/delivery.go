package postgres

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentPathTx's write of paths (storesql the
// rest of 0018_delivery's statements).

// PutPaths implements hub.AgentPathTx: the rows in one statement, stamped
// with the server's clock, which every replica shares.
func (t *Tx) PutPaths(rows []hub.PathRow, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	ids, seen, until := make([]int64, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	vias, replicas := make([]int16, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		ids[i], vias[i], seen[i], until[i], replicas[i] = r.AgentID, int16(r.Via), row.Nanos(r.LastSeenAt), row.Nanos(r.LiveUntil), r.Replica
	}
	_, err := t.exec(`INSERT INTO agent_paths AS p (agent_id, via, last_seen_at, live_until, replica, written_at)
		SELECT v.id, v.via, v.seen, v.until, v.replica, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000000)::bigint
		FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::bigint[], $5::text[]) AS v(id, via, seen, until, replica)
		WHERE EXISTS (SELECT 1 FROM agents a WHERE a.id = v.id)
		ON CONFLICT (agent_id, via) DO UPDATE SET
			last_seen_at = GREATEST(p.last_seen_at, excluded.last_seen_at),
			live_until = CASE WHEN p.replica = excluded.replica OR p.live_until < excluded.live_until OR p.live_until <= $6
				THEN excluded.live_until ELSE p.live_until END,
			replica = CASE WHEN p.replica = excluded.replica OR p.live_until < excluded.live_until OR p.live_until <= $6
				THEN excluded.replica ELSE p.replica END,
			written_at = excluded.written_at`,
		ids, vias, seen, until, replicas, row.Nanos(now))
	return err
}
