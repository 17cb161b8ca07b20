package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentPathTx, hub.RetireTx, hub.DigestTx and
// hub.NoticeTx (0018_delivery) but for PutPaths, whose rows each store
// stamps with its own clock, and QueuedDue (message.go).

// PathsSince implements hub.AgentPathTx.
func (x Statements) PathsSince(since time.Time, except string) ([]hub.PathRow, time.Time, error) {
	var newest int64
	if err := x.DB.QueryRow(`SELECT COALESCE(MAX(written_at), 0) FROM agent_paths`).Scan(&newest); err != nil {
		return nil, time.Time{}, fmt.Errorf("newest path: %w", err)
	}
	rows, err := all(x.DB, row.PathRow, `SELECT agent_id, via, last_seen_at, live_until, replica, written_at FROM agent_paths
		WHERE written_at > ? AND replica <> ? ORDER BY written_at`, row.Nanos(since), except)
	if err != nil {
		return nil, time.Time{}, err
	}
	return rows, row.Time(newest), nil
}

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

// RetireAgents implements hub.RetireTx.
func (x Statements) RetireAgents(ids []int64, cutoff, at time.Time) ([]int64, error) {
	return column[int64](x.DB, `UPDATE agents SET retired_at = ? WHERE `+x.Dialect.InIDs("id")+`
		AND retired_at = 0 AND disabled_at = 0 AND last_seen_at < ? RETURNING id`, row.Nanos(at), x.Dialect.IDs(ids), row.Nanos(cutoff))
}

// ReturnAgents implements hub.RetireTx.
func (x Statements) ReturnAgents(ids []int64) ([]int64, error) {
	return column[int64](x.DB, `UPDATE agents SET retired_at = 0 WHERE `+x.Dialect.InIDs("id")+`
		AND retired_at <> 0 AND last_seen_at > retired_at RETURNING id`, x.Dialect.IDs(ids))
}

// HeldDue implements hub.DigestTx.
func (x Statements) HeldDue(now time.Time, limit int) ([]hub.HeldMessage, error) {
	return all(x.DB, row.HeldMessage, `SELECT d.agent_id, a.name, a.locale, d.message_id, m.sender, m.sender_kind, m.channel, m.body,
			d.in_context_at <> 0 OR a.read_up_to >= d.message_id
		FROM deliveries d JOIN agents a ON a.id = d.agent_id JOIN messages m ON m.id = d.message_id
		WHERE d.held = 1 AND a.disabled_at = 0
		AND NOT EXISTS (SELECT 1 FROM deep_work w WHERE w.agent_id = d.agent_id AND w.state = 'active'
			AND (w.mode = 'flexible' OR w.ends_at > ?))
		ORDER BY d.agent_id, d.message_id LIMIT ?`, row.Nanos(now), limit)
}

// ReleaseHeld implements hub.DigestTx.
func (x Statements) ReleaseHeld(agentID int64, ids []int64) error {
	_, err := x.DB.Exec(`UPDATE deliveries SET held = 2 WHERE agent_id = ? AND held = 1
		AND `+x.Dialect.InIDs("message_id"), agentID, x.Dialect.IDs(ids))
	return err
}

// NoticeCounts implements hub.NoticeTx.
func (x Statements) NoticeCounts(agentIDs []int64) (map[int64]hub.NoticeCount, error) {
	out := make(map[int64]hub.NoticeCount, len(agentIDs))
	rows, done, err := x.DB.Query(`SELECT agent_id, notice_window, notices_sent FROM agent_checks WHERE `+x.Dialect.InIDs("agent_id"), x.Dialect.IDs(agentIDs))
	if err != nil {
		return nil, err
	}
	defer done()
	for rows.Next() {
		var id, window int64
		var c hub.NoticeCount
		if err := rows.Scan(&id, &window, &c.Sent); err != nil {
			return nil, fmt.Errorf("notice counts: %w", err)
		}
		c.Window = row.Time(window)
		out[id] = c
	}
	return out, rows.Err()
}

// MarkQueueChecked implements hub.NoticeTx.
func (x Statements) MarkQueueChecked(ids []int64) error {
	_, err := x.DB.Exec(`UPDATE messages SET queue_checked = `+x.Dialect.True+` WHERE `+x.Dialect.InIDs("id"), x.Dialect.IDs(ids))
	return err
}

// PutNoticeCounts implements hub.NoticeTx: the counts are kept in the
// agents' check rows (an agent without one gets one with no check due).
func (x Statements) PutNoticeCounts(cs map[int64]hub.NoticeCount) error {
	rows := make([]any, 0, 3*len(cs))
	for id, c := range cs {
		rows = append(rows, id, row.Nanos(c.Window), c.Sent)
	}
	return x.DB.ExecRows(Batch{What: "put notice counts", Head: `INSERT INTO agent_checks (agent_id, notice_window, notices_sent) `,
		Tail:  ` ON CONFLICT (agent_id) DO UPDATE SET notice_window = excluded.notice_window, notices_sent = excluded.notices_sent`,
		Types: []string{"bigint", "bigint", "integer"}}, rows, nil)
}
