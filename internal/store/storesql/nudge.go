package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.NudgeTx's reads of one agent and of new
// mentions, and completes the due checks each store reads (FillNudges);
// the writes of many checks are each store's.

// DueAgentChecks implements hub.NudgeTx.
func (x Statements) DueAgentChecks(now time.Time, limit int) ([]int64, error) {
	return column[int64](x.DB, `SELECT agent_id FROM agent_checks WHERE next_check_at > 0 AND next_check_at <= ?
		ORDER BY next_check_at LIMIT ?`, row.Nanos(now), limit)
}

// AgentCheck implements hub.NudgeTx.
func (x Statements) AgentCheck(agentID int64) (hub.AgentCheck, error) {
	c := hub.AgentCheck{AgentID: agentID}
	var next, last int64
	err := x.DB.QueryRow(`SELECT next_check_at, episode, nudge_count, last_nudge_at FROM agent_checks WHERE agent_id = ?`, agentID).
		Scan(&next, &c.Episode, &c.NudgeCount, &last)
	if x.DB.IsNoRows(err) {
		return c, nil
	} else if err != nil {
		return c, err
	}
	c.NextCheckAt, c.LastNudgeAt = row.Time(next), row.Time(last)
	return c, nil
}

// MentionsAfter implements hub.NudgeTx. It walks the mention deliveries
// by message ID, so its cost is that of the new ones.
func (x Statements) MentionsAfter(afterID int64, limit int) ([]hub.MentionDelivery, error) {
	return all(x.DB, func(s row.Scanner) (hub.MentionDelivery, error) {
		var d hub.MentionDelivery
		var created int64
		err := s.Scan(&d.AgentID, &d.MessageID, &created)
		d.CreatedAt = row.Time(created)
		return d, err
	}, `SELECT d.agent_id, d.message_id, m.created_at FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.message_id > ? AND d.mention = `+x.Dialect.True+` AND m.sender <> ? ORDER BY d.message_id LIMIT ?`,
		afterID, hub.SenderOrchestrator, limit)
}

// UnreadMentions implements hub.NudgeTx.
func (x Statements) UnreadMentions(agentID, readUpTo int64) (int64, time.Time, error) {
	var n, oldest int64
	err := x.DB.QueryRow(`SELECT COUNT(*), COALESCE(MIN(m.created_at), 0) FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = ? AND d.message_id > ? AND d.mention = `+x.Dialect.True+` AND m.sender <> ?`,
		agentID, readUpTo, hub.SenderOrchestrator).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, row.Time(oldest), nil
}

// FillNudges completes due nudge checks whose agents are set: the
// liveness state of each that has none, as LivenessState would, and the
// unread mentions of each, as UnreadMentions would.
func (x Statements) FillNudges(out []hub.DueNudge) ([]hub.DueNudge, error) {
	if len(out) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(out))
	byID := make(map[int64]*hub.DueNudge, len(out))
	var unread []int64 // the agents whose liveness state is to be read
	unreadByID := map[int64]*hub.DueNudge{}
	for i := range out {
		id := out[i].Agent.ID
		ids[i], byID[id] = id, &out[i]
		if out[i].State == nil {
			unread, unreadByID[id] = append(unread, id), &out[i]
		}
	}
	if len(unread) > 0 {
		if err := x.nudgeLiveness(unread, unreadByID); err != nil {
			return nil, err
		}
	}
	if err := x.nudgeMentions(ids, byID); err != nil {
		return nil, err
	}
	return out, nil
}

// nudgeMentions sets the unread mentions of each agent of byID (ids:
// their IDs), as UnreadMentions would.
func (x Statements) nudgeMentions(ids []int64, byID map[int64]*hub.DueNudge) error {
	rows, done, err := x.DB.Query(`SELECT a.id, COUNT(*), MIN(m.created_at) FROM agents a
		JOIN deliveries d ON d.agent_id = a.id AND d.message_id > a.read_up_to
		JOIN messages m ON m.id = d.message_id
		WHERE `+x.Dialect.InIDs("a.id")+` AND d.mention = `+x.Dialect.True+` AND m.sender <> ?
		GROUP BY a.id`, x.Dialect.IDs(ids), hub.SenderOrchestrator)
	if err != nil {
		return fmt.Errorf("unread mentions: %w", err)
	}
	defer done()
	for rows.Next() {
		var id, n, oldest int64
		if err := rows.Scan(&id, &n, &oldest); err != nil {
			return fmt.Errorf("unread mentions: %w", err)
		}
		if d := byID[id]; d != nil {
			d.UnreadMentions, d.OldestMention = n, row.Time(oldest)
		}
	}
	return rows.Err()
}
