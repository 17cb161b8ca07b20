package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.NudgeTx's reads of one agent and of new
// mentions, and its writes of checks, and completes the due checks each
// store reads (FillNudges).

// DueAgentChecks implements hub.NudgeTx.
func (x Statements) DueAgentChecks(now time.Time, limit int) ([]int64, error) {
	return column[int64](x.DB, `SELECT agent_id FROM agent_checks WHERE next_check_at > 0 AND next_check_at <= ?
		ORDER BY next_check_at LIMIT ?`, row.Nanos(now), limit)
}

// AgentCheck implements hub.NudgeTx.
func (x Statements) AgentCheck(agentID int64) (hub.AgentCheck, error) {
	c := hub.AgentCheck{AgentID: agentID}
	var next, last, window int64
	err := x.DB.QueryRow(`SELECT next_check_at, episode, nudge_count, last_nudge_at, notice_window, notices_sent FROM agent_checks WHERE agent_id = ?`, agentID).
		Scan(&next, &c.Episode, &c.NudgeCount, &last, &window, &c.Notices.Sent)
	if x.DB.IsNoRows(err) {
		return c, nil
	} else if err != nil {
		return c, err
	}
	c.NextCheckAt, c.LastNudgeAt, c.Notices.Window = row.Time(next), row.Time(last), row.Time(window)
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

// agentCheckBatch writes agent checks, each replacing the agent's.
var agentCheckBatch = Batch{What: "put agent checks",
	Head: `INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at) `,
	Tail: ` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
		nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`,
	Types: []string{"bigint", "bigint", "text", "bigint", "bigint"},
}

// PutAgentCheck implements hub.NudgeTx.
func (x Statements) PutAgentCheck(c hub.AgentCheck) error {
	return x.PutAgentChecks([]hub.AgentCheck{c})
}

// PutAgentChecks implements hub.NudgeTx: one row per agent, the last
// given (PostgreSQL's upsert may not touch a row twice).
func (x Statements) PutAgentChecks(cs []hub.AgentCheck) error {
	at := make(map[int64]int, len(cs)) // agent → its row in rows
	rows := make([]any, 0, 5*len(cs))
	for _, c := range cs {
		i, ok := at[c.AgentID]
		if !ok {
			i, at[c.AgentID] = len(rows)/5, len(rows)/5
			rows = append(rows, c.AgentID, nil, nil, nil, nil)
		}
		rows[5*i+1], rows[5*i+2], rows[5*i+3], rows[5*i+4] = row.Nanos(c.NextCheckAt), c.Episode, c.NudgeCount, row.Nanos(c.LastNudgeAt)
	}
	return x.DB.ExecRows(agentCheckBatch, rows, nil)
}

// ScheduleAgentCheck implements hub.NudgeTx.
func (x Statements) ScheduleAgentCheck(agentID int64, at time.Time) error {
	return x.ScheduleAgentChecks([]hub.AgentTime{{AgentID: agentID, At: at}})
}

// ScheduleAgentChecks implements hub.NudgeTx: a check moves only earlier
// (or from none, 0); an agent named twice keeps the earliest time.
func (x Statements) ScheduleAgentChecks(cs []hub.AgentTime) error {
	at := make(map[int64]int, len(cs)) // agent → its row in rows
	rows := make([]any, 0, 2*len(cs))
	for _, c := range cs {
		n := max(row.Nanos(c.At), 1)
		if i, ok := at[c.AgentID]; ok {
			rows[2*i+1] = min(rows[2*i+1].(int64), n)
			continue
		}
		at[c.AgentID] = len(rows) / 2
		rows = append(rows, c.AgentID, n)
	}
	return x.DB.ExecRows(Batch{What: "schedule agent checks",
		Head: `INSERT INTO agent_checks (agent_id, next_check_at) `,
		Tail: ` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`,
		Types: []string{"bigint", "bigint"}}, rows, nil)
}

// ClaimNudges implements hub.NudgeTx: a conditional update of many checks
// that returns the agents whose check it changed (a check that is no
// longer the one the nudge was decided from is left alone, so not
// returned; under PostgreSQL's READ COMMITTED a row another transaction
// changed first is checked again in its new version).
func (x Statements) ClaimNudges(ns []hub.NudgeClaim) ([]bool, error) {
	fresh := make([]bool, len(ns))
	rows := make([]any, 0, 10*len(ns))
	index := make(map[int64]int, len(ns))
	for i, n := range ns {
		c, w := n.Check, n.Was
		rows = append(rows, c.AgentID, row.Nanos(c.NextCheckAt), c.Episode, c.NudgeCount, row.Nanos(c.LastNudgeAt),
			w.Episode, w.NudgeCount, row.Nanos(w.LastNudgeAt), row.Nanos(c.Notices.Window), c.Notices.Sent)
		index[c.AgentID] = i
	}
	err := x.DB.ExecRows(Batch{What: "claim nudges",
		Head: `UPDATE agent_checks SET next_check_at = v.column2, episode = v.column3, nudge_count = v.column4, last_nudge_at = v.column5,
			notice_window = v.column9, notices_sent = v.column10
		FROM (`,
		Tail: `) AS v WHERE agent_checks.agent_id = v.column1
			AND agent_checks.episode = v.column6 AND agent_checks.nudge_count = v.column7 AND agent_checks.last_nudge_at = v.column8
		RETURNING agent_checks.agent_id`,
		Types: []string{"bigint", "bigint", "text", "bigint", "bigint", "text", "bigint", "bigint", "bigint", "bigint"}}, rows, func(s row.Scanner) error {
		var id int64
		if err := s.Scan(&id); err != nil {
			return err
		}
		if i, ok := index[id]; ok {
			fresh[i] = true
		}
		return nil
	})
	return fresh, err
}
