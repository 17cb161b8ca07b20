package sqlite

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentPathTx, hub.RetireTx, hub.DigestTx and
// hub.NoticeTx (0016_delivery.sql).

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

// PathsSince implements hub.AgentPathTx.
func (t *Tx) PathsSince(since time.Time) ([]hub.PathRow, error) {
	return scanAll(t, row.PathRow, `SELECT agent_id, via, last_seen_at, live_until, replica, written_at FROM agent_paths
		WHERE written_at > ? ORDER BY written_at`, row.Nanos(since))
}

// RetireCandidates implements hub.RetireTx.
func (t *Tx) RetireCandidates(cutoff, now time.Time, limit int) ([]hub.RetireCandidate, error) {
	return scanAll(t, func(s row.Scanner) (hub.RetireCandidate, error) {
		var c hub.RetireCandidate
		var seen, created int64
		err := s.Scan(&c.AgentID, &c.Name, &seen, &created)
		c.LastSeenAt, c.CreatedAt = row.Time(seen), row.Time(created)
		return c, err
	}, `SELECT a.id, a.name, a.last_seen_at, a.created_at FROM agents a
		WHERE a.retired_at = 0 AND a.disabled_at = 0 AND a.last_seen_at < ?1 AND a.created_at < ?1
		AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.agent_id = a.id AND r.expires_at > ?2)
		AND NOT EXISTS (SELECT 1 FROM tasks k WHERE k.assignee_id = a.id AND k.state = 'claimed')
		ORDER BY a.last_seen_at LIMIT ?3`, row.Nanos(cutoff), row.Nanos(now), limit)
}

// RetireAgents implements hub.RetireTx.
func (t *Tx) RetireAgents(ids []int64, cutoff, at time.Time) ([]int64, error) {
	return queryColumn[int64](t, `UPDATE agents SET retired_at = ? WHERE id IN (SELECT value FROM json_each(?))
		AND retired_at = 0 AND disabled_at = 0 AND last_seen_at < ? RETURNING id`, row.Nanos(at), idList(ids), row.Nanos(cutoff))
}

// ReturnAgents implements hub.RetireTx.
func (t *Tx) ReturnAgents(ids []int64) ([]int64, error) {
	return queryColumn[int64](t, `UPDATE agents SET retired_at = 0 WHERE id IN (SELECT value FROM json_each(?))
		AND retired_at <> 0 AND last_seen_at > retired_at RETURNING id`, idList(ids))
}

// HeldDue implements hub.DigestTx.
func (t *Tx) HeldDue(now time.Time, limit int) ([]hub.HeldMessage, error) {
	return scanAll(t, row.HeldMessage, `SELECT d.agent_id, a.name, a.locale, d.message_id, m.sender, m.sender_kind, m.channel, m.body,
			d.in_context_at <> 0 OR a.read_up_to >= d.message_id
		FROM deliveries d JOIN agents a ON a.id = d.agent_id JOIN messages m ON m.id = d.message_id
		WHERE d.held = 1 AND a.disabled_at = 0
		AND NOT EXISTS (SELECT 1 FROM deep_work w WHERE w.agent_id = d.agent_id AND w.state = 'active'
			AND (w.mode = 'flexible' OR w.ends_at > ?))
		ORDER BY d.agent_id, d.message_id LIMIT ?`, row.Nanos(now), limit)
}

// ReleaseHeld implements hub.DigestTx.
func (t *Tx) ReleaseHeld(agentID int64, ids []int64) error {
	_, err := t.exec(`UPDATE deliveries SET held = 2 WHERE agent_id = ? AND held = 1
		AND message_id IN (SELECT value FROM json_each(?))`, agentID, idList(ids))
	return err
}

// NoticeCounts implements hub.NoticeTx.
func (t *Tx) NoticeCounts(agentIDs []int64) (map[int64]hub.NoticeCount, error) {
	out := make(map[int64]hub.NoticeCount, len(agentIDs))
	rows, err := t.query(`SELECT agent_id, window_start, sent FROM notice_counts WHERE agent_id IN (SELECT value FROM json_each(?))`, idList(agentIDs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, window int64
		var c hub.NoticeCount
		if err := rows.Scan(&id, &window, &c.Sent); err != nil {
			return nil, err
		}
		c.Window = row.Time(window)
		out[id] = c
	}
	return out, rows.Err()
}

// PutNoticeCounts implements hub.NoticeTx.
func (t *Tx) PutNoticeCounts(cs map[int64]hub.NoticeCount) error {
	for id, c := range cs {
		if _, err := t.exec(`INSERT INTO notice_counts (agent_id, window_start, sent) VALUES (?, ?, ?)
			ON CONFLICT (agent_id) DO UPDATE SET window_start = excluded.window_start, sent = excluded.sent`,
			id, row.Nanos(c.Window), c.Sent); err != nil {
			return err
		}
	}
	return nil
}

// QueuedDue implements hub.NoticeTx.
func (t *Tx) QueuedDue(cutoff time.Time, limit int) ([]*hub.Message, error) {
	return t.queryMessages(`SELECT `+messageColumns+` FROM messages m
		WHERE m.queue_checked = 0 AND (m.ack_required = 1 OR m.priority = 4) AND m.created_at <= ?
		ORDER BY m.id LIMIT ?`, row.Nanos(cutoff), limit)
}

// MarkQueueChecked implements hub.NoticeTx.
func (t *Tx) MarkQueueChecked(ids []int64) error {
	_, err := t.exec(`UPDATE messages SET queue_checked = 1 WHERE id IN (SELECT value FROM json_each(?))`, idList(ids))
	return err
}
