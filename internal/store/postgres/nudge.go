package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.NudgeTx: the per-agent check schedule, the
// mentions it looks at and the batched reads and writes of the nudge checks.

// DueAgentChecks implements hub.NudgeTx.
func (t *Tx) DueAgentChecks(now time.Time, limit int) ([]int64, error) {
	return queryColumn[int64](t, `SELECT agent_id FROM agent_checks WHERE next_check_at > 0 AND next_check_at <= $1
		ORDER BY next_check_at LIMIT $2`, row.Nanos(now), limit)
}

// AgentCheck implements hub.NudgeTx.
func (t *Tx) AgentCheck(agentID int64) (hub.AgentCheck, error) {
	c := hub.AgentCheck{AgentID: agentID}
	var next, last int64
	err := t.queryRow(`SELECT next_check_at, episode, nudge_count, last_nudge_at FROM agent_checks WHERE agent_id = $1`, agentID).
		Scan(&next, &c.Episode, &c.NudgeCount, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, nil
	} else if err != nil {
		return c, err
	}
	c.NextCheckAt, c.LastNudgeAt = row.Time(next), row.Time(last)
	return c, nil
}

// PutAgentCheck implements hub.NudgeTx.
func (t *Tx) PutAgentCheck(c hub.AgentCheck) error { return t.PutAgentChecks([]hub.AgentCheck{c}) }

// PutAgentChecks implements hub.NudgeTx.
func (t *Tx) PutAgentChecks(cs []hub.AgentCheck) error {
	if len(cs) == 0 {
		return nil
	}
	// One row per agent, the last given (an upsert may not touch a row twice).
	at := map[int64]int{}
	var ids, next, counts, last []int64
	var episodes []string
	for _, c := range cs {
		i, ok := at[c.AgentID]
		if !ok {
			i, at[c.AgentID] = len(ids), len(ids)
			ids, next, counts, last, episodes = append(ids, 0), append(next, 0), append(counts, 0), append(last, 0), append(episodes, "")
		}
		ids[i], next[i], episodes[i], counts[i], last[i] = c.AgentID, row.Nanos(c.NextCheckAt), c.Episode, int64(c.NudgeCount), row.Nanos(c.LastNudgeAt)
	}
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[])
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
			nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`, ids, next, episodes, counts, last)
	if err != nil {
		return fmt.Errorf("put agent checks: %w", err)
	}
	return nil
}

// ScheduleAgentCheck implements hub.NudgeTx.
func (t *Tx) ScheduleAgentCheck(agentID int64, at time.Time) error {
	return t.ScheduleAgentChecks([]hub.AgentTime{{AgentID: agentID, At: at}})
}

// ScheduleAgentChecks implements hub.NudgeTx. An agent named twice keeps
// the earliest time.
func (t *Tx) ScheduleAgentChecks(cs []hub.AgentTime) error {
	if len(cs) == 0 {
		return nil
	}
	ids, at := agentTimes(cs, 1)
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at)
		SELECT id, MIN(at) FROM unnest($1::bigint[], $2::bigint[]) AS v(id, at) GROUP BY id
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`, ids, at)
	if err != nil {
		return fmt.Errorf("schedule agent checks: %w", err)
	}
	return nil
}

// MentionsAfter implements hub.NudgeTx. It walks the mention deliveries
// by message ID (deliveries_mention), so its cost is that of the new ones.
func (t *Tx) MentionsAfter(afterID int64, limit int) ([]hub.MentionDelivery, error) {
	rows, err := t.query(`SELECT d.agent_id, d.message_id, m.created_at FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.message_id > $1 AND d.mention AND m.sender <> $2 ORDER BY d.message_id LIMIT $3`, afterID, hub.SenderOrchestrator, limit)
	return scanRows(rows, err, func(r pgx.Rows) (hub.MentionDelivery, error) {
		var d hub.MentionDelivery
		var created int64
		err := r.Scan(&d.AgentID, &d.MessageID, &created)
		d.CreatedAt = row.Time(created)
		return d, err
	})
}

// ClaimNudges implements hub.NudgeTx: one conditional update of every
// check that returns the agents whose check it changed (a check that is no
// longer the one the nudge was decided from is left alone, so not
// returned; under READ COMMITTED a row another transaction changed first
// is checked again in its new version).
func (t *Tx) ClaimNudges(ns []hub.NudgeClaim) ([]bool, error) {
	fresh := make([]bool, len(ns))
	if len(ns) == 0 {
		return fresh, nil
	}
	n := len(ns)
	agents, next, last, wasLast := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	counts, wasCounts := make([]int64, n), make([]int64, n)
	episodes, wasEpisodes := make([]string, n), make([]string, n)
	index := make(map[int64]int, n)
	for i, c := range ns {
		agents[i], next[i], episodes[i], counts[i], last[i] = c.Check.AgentID, row.Nanos(c.Check.NextCheckAt), c.Check.Episode, int64(c.Check.NudgeCount), row.Nanos(c.Check.LastNudgeAt)
		wasEpisodes[i], wasCounts[i], wasLast[i] = c.Was.Episode, int64(c.Was.NudgeCount), row.Nanos(c.Was.LastNudgeAt)
		index[agents[i]] = i
	}
	rows, err := t.query(`UPDATE agent_checks c SET next_check_at = v.next_check_at, episode = v.episode, nudge_count = v.nudge_count, last_nudge_at = v.last_nudge_at
		FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[])
			AS v(agent_id, next_check_at, episode, nudge_count, last_nudge_at, was_episode, was_count, was_last)
		WHERE c.agent_id = v.agent_id AND c.episode = v.was_episode AND c.nudge_count = v.was_count AND c.last_nudge_at = v.was_last
		RETURNING c.agent_id`, agents, next, episodes, counts, last, wasEpisodes, wasCounts, wasLast)
	if err != nil {
		return nil, fmt.Errorf("claim nudges: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if i, ok := index[id]; ok {
			fresh[i] = true
		}
	}
	return fresh, mapErr(rows.Err())
}

// UnreadMentions implements hub.NudgeTx.
func (t *Tx) UnreadMentions(agentID, readUpTo int64) (int64, time.Time, error) {
	var n, oldest int64
	err := t.queryRow(`SELECT COUNT(*), COALESCE(MIN(m.created_at), 0) FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = $1 AND d.message_id > $2 AND d.mention AND m.sender <> $3`, agentID, readUpTo, hub.SenderOrchestrator).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, row.Time(oldest), nil
}

// DueNudges implements hub.NudgeTx. Its checks are read with their agents
// in one round trip; an agent of known replaces the one read.
func (t *Tx) DueNudges(now time.Time, limit int, known map[int64]hub.AgentLiveness) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT `+row.AgentColumnsA+`, c.next_check_at, c.episode, c.nudge_count, c.last_nudge_at
		FROM agent_checks c JOIN agents a ON a.id = c.agent_id
		WHERE c.next_check_at > 0 AND c.next_check_at <= $1 ORDER BY c.next_check_at LIMIT $2`, row.Nanos(now), limit)
	var c hub.AgentCheck
	var next, last int64
	scan := row.NewAgentScan(&next, &c.Episode, &c.NudgeCount, &last)
	out, err := scanRows(rows, err, func(r pgx.Rows) (hub.DueNudge, error) {
		a, err := scan.Scan(r)
		if err != nil {
			return hub.DueNudge{}, err
		}
		c.AgentID, c.NextCheckAt, c.LastNudgeAt = a.ID, row.Time(next), row.Time(last)
		return hub.DueNudge{Agent: a, Check: c}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("due nudge checks: %w", err)
	}
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
		if k, ok := known[id]; ok {
			out[i].Agent, out[i].State = k.Agent, k.State
		} else {
			unread, unreadByID[id] = append(unread, id), &out[i]
		}
	}
	if len(unread) > 0 {
		if err := t.NudgeLiveness(unread, unreadByID); err != nil {
			return nil, err
		}
	}
	if err := t.nudgeMentions(ids, byID); err != nil {
		return nil, err
	}
	return out, nil
}

// nudgeMentions sets the unread mentions of each agent of byID, as
// UnreadMentions would.
func (t *Tx) nudgeMentions(ids []int64, byID map[int64]*hub.DueNudge) error {
	rows, err := t.query(`SELECT a.id, COUNT(*), MIN(m.created_at) FROM agents a
		JOIN deliveries d ON d.agent_id = a.id AND d.message_id > a.read_up_to
		JOIN messages m ON m.id = d.message_id
		WHERE a.id = ANY($1) AND d.mention AND m.sender <> $2
		GROUP BY a.id`, ids, hub.SenderOrchestrator)
	if err != nil {
		return fmt.Errorf("unread mentions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, n, oldest int64
		if err := rows.Scan(&id, &n, &oldest); err != nil {
			return err
		}
		if d := byID[id]; d != nil {
			d.UnreadMentions, d.OldestMention = n, row.Time(oldest)
		}
	}
	return rows.Err()
}
