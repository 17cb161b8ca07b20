package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentPathTx, hub.RetireTx, hub.DigestTx and
// hub.NoticeTx (0014_delivery.sql).

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

// PathsSince implements hub.AgentPathTx.
func (t *Tx) PathsSince(since time.Time) ([]hub.PathRow, error) {
	rows, err := t.query(`SELECT agent_id, via, last_seen_at, live_until, replica, written_at FROM agent_paths
		WHERE written_at > $1 ORDER BY written_at`, row.Nanos(since))
	return scanRows(rows, err, func(r pgx.Rows) (hub.PathRow, error) { return row.PathRow(r) })
}

// RetireCandidates implements hub.RetireTx.
func (t *Tx) RetireCandidates(cutoff, now time.Time, limit int) ([]hub.RetireCandidate, error) {
	rows, err := t.query(`SELECT a.id, a.name, a.last_seen_at, a.created_at FROM agents a
		WHERE a.retired_at = 0 AND a.disabled_at = 0 AND a.last_seen_at < $1 AND a.created_at < $1
		AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.agent_id = a.id AND r.expires_at > $2)
		AND NOT EXISTS (SELECT 1 FROM tasks k WHERE k.assignee_id = a.id AND k.state = 'claimed')
		ORDER BY a.last_seen_at LIMIT $3`, row.Nanos(cutoff), row.Nanos(now), limit)
	return scanRows(rows, err, func(r pgx.Rows) (hub.RetireCandidate, error) {
		var c hub.RetireCandidate
		var seen, created int64
		err := r.Scan(&c.AgentID, &c.Name, &seen, &created)
		c.LastSeenAt, c.CreatedAt = row.Time(seen), row.Time(created)
		return c, err
	})
}

// RetireAgents implements hub.RetireTx.
func (t *Tx) RetireAgents(ids []int64, cutoff, at time.Time) ([]int64, error) {
	return queryColumn[int64](t, `UPDATE agents SET retired_at = $1 WHERE id = ANY($2::bigint[])
		AND retired_at = 0 AND disabled_at = 0 AND last_seen_at < $3 RETURNING id`, row.Nanos(at), ids, row.Nanos(cutoff))
}

// ReturnAgents implements hub.RetireTx.
func (t *Tx) ReturnAgents(ids []int64) ([]int64, error) {
	return queryColumn[int64](t, `UPDATE agents SET retired_at = 0 WHERE id = ANY($1::bigint[])
		AND retired_at <> 0 AND last_seen_at > retired_at RETURNING id`, ids)
}

// HeldDue implements hub.DigestTx.
func (t *Tx) HeldDue(now time.Time, limit int) ([]hub.HeldMessage, error) {
	rows, err := t.query(`SELECT d.agent_id, a.name, a.locale, d.message_id, m.sender, m.sender_kind, m.channel, m.body,
			d.in_context_at <> 0 OR a.read_up_to >= d.message_id
		FROM deliveries d JOIN agents a ON a.id = d.agent_id JOIN messages m ON m.id = d.message_id
		WHERE d.held = 1 AND a.disabled_at = 0
		AND NOT EXISTS (SELECT 1 FROM deep_work w WHERE w.agent_id = d.agent_id AND w.state = 'active'
			AND (w.mode = 'flexible' OR w.ends_at > $1))
		ORDER BY d.agent_id, d.message_id LIMIT $2`, row.Nanos(now), limit)
	return scanRows(rows, err, func(r pgx.Rows) (hub.HeldMessage, error) { return row.HeldMessage(r) })
}

// ReleaseHeld implements hub.DigestTx.
func (t *Tx) ReleaseHeld(agentID int64, ids []int64) error {
	_, err := t.exec(`UPDATE deliveries SET held = 2 WHERE agent_id = $1 AND held = 1 AND message_id = ANY($2::bigint[])`, agentID, ids)
	return err
}

// NoticeCounts implements hub.NoticeTx.
func (t *Tx) NoticeCounts(agentIDs []int64) (map[int64]hub.NoticeCount, error) {
	out := make(map[int64]hub.NoticeCount, len(agentIDs))
	rows, err := t.query(`SELECT agent_id, window_start, sent FROM notice_counts WHERE agent_id = ANY($1::bigint[])`, agentIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, window int64
		var c hub.NoticeCount
		if err := rows.Scan(&id, &window, &c.Sent); err != nil {
			return nil, mapErr(err)
		}
		c.Window = row.Time(window)
		out[id] = c
	}
	return out, mapErr(rows.Err())
}

// PutNoticeCounts implements hub.NoticeTx.
func (t *Tx) PutNoticeCounts(cs map[int64]hub.NoticeCount) error {
	var ids, windows []int64
	var sent []int32
	for id, c := range cs {
		ids, windows, sent = append(ids, id), append(windows, row.Nanos(c.Window)), append(sent, int32(c.Sent))
	}
	_, err := t.exec(`INSERT INTO notice_counts (agent_id, window_start, sent)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[])
		ON CONFLICT (agent_id) DO UPDATE SET window_start = excluded.window_start, sent = excluded.sent`, ids, windows, sent)
	return err
}

// QueuedDue implements hub.NoticeTx.
func (t *Tx) QueuedDue(cutoff time.Time, limit int) ([]*hub.Message, error) {
	rows, err := t.query(`SELECT `+messageColumns+` FROM messages m
		WHERE NOT m.queue_checked AND (m.ack_required OR m.priority = 4) AND m.created_at <= $1
		ORDER BY m.id LIMIT $2`, row.Nanos(cutoff), limit)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.Message, error) { return scanMessage(r) })
}

// MarkQueueChecked implements hub.NoticeTx.
func (t *Tx) MarkQueueChecked(ids []int64) error {
	_, err := t.exec(`UPDATE messages SET queue_checked = TRUE WHERE id = ANY($1::bigint[])`, ids)
	return err
}
