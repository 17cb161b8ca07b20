package sqlite

import (
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.NudgeTx's writes of checks, in multi-row
// statements (execRows), and the due checks' read (storesql the rest).

// PutAgentCheck implements hub.NudgeTx.
func (t *Tx) PutAgentCheck(c hub.AgentCheck) error {
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
			nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`,
		c.AgentID, row.Nanos(c.NextCheckAt), c.Episode, c.NudgeCount, row.Nanos(c.LastNudgeAt))
	return err
}

// ScheduleAgentCheck implements hub.NudgeTx.
func (t *Tx) ScheduleAgentCheck(agentID int64, at time.Time) error {
	n := row.Nanos(at)
	if n <= 0 {
		n = 1
	}
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at) VALUES (?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`, agentID, n)
	return err
}

// ClaimNudges implements hub.NudgeTx: a multi-row conditional update that
// returns the agents whose check it changed (a check that is no longer the
// one the nudge was decided from is left alone, so not returned).
func (t *Tx) ClaimNudges(ns []hub.NudgeClaim) ([]bool, error) {
	fresh := make([]bool, len(ns))
	if len(ns) == 0 {
		return fresh, nil
	}
	args := make([]any, 0, 8*len(ns))
	index := make(map[int64]int, len(ns))
	for i, n := range ns {
		c, w := n.Check, n.Was
		args = append(args, c.AgentID, row.Nanos(c.NextCheckAt), c.Episode, c.NudgeCount, row.Nanos(c.LastNudgeAt),
			w.Episode, w.NudgeCount, row.Nanos(w.LastNudgeAt))
		index[c.AgentID] = i
	}
	err := t.queryRows("claim nudges", `WITH v (agent_id, next_check_at, episode, nudge_count, last_nudge_at, was_episode, was_count, was_last) AS (VALUES `,
		`) UPDATE agent_checks SET next_check_at = v.next_check_at, episode = v.episode, nudge_count = v.nudge_count, last_nudge_at = v.last_nudge_at
		FROM v WHERE agent_checks.agent_id = v.agent_id
			AND agent_checks.episode = v.was_episode AND agent_checks.nudge_count = v.was_count AND agent_checks.last_nudge_at = v.was_last
		RETURNING agent_checks.agent_id`, 8, args, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			if i, ok := index[id]; ok {
				fresh[i] = true
			}
			return nil
		})
	return fresh, err
}

// DueNudges implements hub.NudgeTx: the due checks first, then the
// agents and liveness states not known, then every agent's mentions.
func (t *Tx) DueNudges(now time.Time, limit int, known map[int64]hub.AgentLiveness) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT agent_id, next_check_at, episode, nudge_count, last_nudge_at FROM agent_checks
		WHERE next_check_at > 0 AND next_check_at <= ? ORDER BY next_check_at LIMIT ?`, row.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due nudge checks: %w", err)
	}
	out := make([]hub.DueNudge, 0, min(limit, dueRowsCap))
	var unknown []int64 // the agents to read
	for rows.Next() {
		var c hub.AgentCheck
		var next, last int64
		if err := rows.Scan(&c.AgentID, &next, &c.Episode, &c.NudgeCount, &last); err != nil {
			rows.Close()
			return nil, err
		}
		c.NextCheckAt, c.LastNudgeAt = row.Time(next), row.Time(last)
		k := known[c.AgentID]
		if k.Agent == nil {
			unknown = append(unknown, c.AgentID)
		}
		out = append(out, hub.DueNudge{Agent: k.Agent, State: k.State, Check: c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		if err := t.nudgeAgents(idList(unknown), out); err != nil {
			return nil, err
		}
		out = slices.DeleteFunc(out, func(d hub.DueNudge) bool { return d.Agent == nil }) // removed meanwhile
	}
	return t.FillNudges(out)
}

// nudgeAgents sets the agent of each check of out whose agent is nil
// (list: their IDs as JSON); an agent not found stays nil.
func (t *Tx) nudgeAgents(list string, out []hub.DueNudge) error {
	rows, err := t.query(`SELECT `+row.AgentColumns+` FROM agents WHERE id IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return fmt.Errorf("read agents: %w", err)
	}
	defer rows.Close()
	as := make(map[int64]*hub.Agent, len(out))
	scan := row.NewAgentScan()
	for rows.Next() {
		a, err := scan.Scan(rows)
		if err != nil {
			return err
		}
		as[a.ID] = a
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range out {
		if out[i].Agent == nil {
			out[i].Agent = as[out[i].Check.AgentID]
		}
	}
	return nil
}

// PutAgentChecks implements hub.NudgeTx.
func (t *Tx) PutAgentChecks(cs []hub.AgentCheck) error {
	args := make([]any, 0, 5*len(cs))
	for _, c := range cs {
		args = append(args, c.AgentID, row.Nanos(c.NextCheckAt), c.Episode, c.NudgeCount, row.Nanos(c.LastNudgeAt))
	}
	return t.execRows("put agent checks", `INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at) VALUES `,
		` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
			nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`, 5, args, nil)
}

// ScheduleAgentChecks implements hub.NudgeTx.
func (t *Tx) ScheduleAgentChecks(cs []hub.AgentTime) error {
	args := make([]any, 0, 2*len(cs))
	for _, c := range cs {
		args = append(args, c.AgentID, max(row.Nanos(c.At), 1))
	}
	return t.execRows("schedule agent checks", `INSERT INTO agent_checks (agent_id, next_check_at) VALUES `,
		` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`, 2, args, nil)
}
