package postgres

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.NudgeTx's writes of checks and the due checks'
// read, one statement each for a whole batch (storesql the rest).

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
	for i := range out {
		if k, ok := known[out[i].Agent.ID]; ok {
			out[i].Agent, out[i].State = k.Agent, k.State
		}
	}
	return t.FillNudges(out)
}
