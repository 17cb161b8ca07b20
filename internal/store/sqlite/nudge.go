package sqlite

import (
	"fmt"
	"slices"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.NudgeTx's read of due checks (storesql the
// rest).

// DueNudges implements hub.NudgeTx: the due checks first, then the
// agents and liveness states not known, then every agent's mentions.
func (t *Tx) DueNudges(now time.Time, limit int, known map[int64]hub.AgentLiveness) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT agent_id, next_check_at, episode, nudge_count, last_nudge_at, notice_window, notices_sent FROM agent_checks
		WHERE next_check_at > 0 AND next_check_at <= ? ORDER BY next_check_at LIMIT ?`, row.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due nudge checks: %w", err)
	}
	out := make([]hub.DueNudge, 0, min(limit, dueRowsCap))
	var unknown []int64 // the agents to read
	for rows.Next() {
		var c hub.AgentCheck
		var next, last, window int64
		if err := rows.Scan(&c.AgentID, &next, &c.Episode, &c.NudgeCount, &last, &window, &c.Notices.Sent); err != nil {
			rows.Close()
			return nil, err
		}
		c.NextCheckAt, c.LastNudgeAt, c.Notices.Window = row.Time(next), row.Time(last), row.Time(window)
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
