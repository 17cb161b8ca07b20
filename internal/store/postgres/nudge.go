package postgres

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.NudgeTx's read of due checks, with their
// agents in one statement (storesql the rest).

// DueNudges implements hub.NudgeTx. Its checks are read with their agents
// in one round trip; an agent of known replaces the one read.
func (t *Tx) DueNudges(now time.Time, limit int, known map[int64]hub.AgentLiveness) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT `+row.AgentColumnsA+`, c.next_check_at, c.episode, c.nudge_count, c.last_nudge_at, c.notice_window, c.notices_sent
		FROM agent_checks c JOIN agents a ON a.id = c.agent_id
		WHERE c.next_check_at > 0 AND c.next_check_at <= $1 ORDER BY c.next_check_at LIMIT $2`, row.Nanos(now), limit)
	var c hub.AgentCheck
	var next, last, window int64
	scan := row.NewAgentScan(&next, &c.Episode, &c.NudgeCount, &last, &window, &c.Notices.Sent)
	out, err := scanRows(rows, err, func(r pgx.Rows) (hub.DueNudge, error) {
		a, err := scan.Scan(r)
		if err != nil {
			return hub.DueNudge{}, err
		}
		c.AgentID, c.NextCheckAt, c.LastNudgeAt, c.Notices.Window = a.ID, row.Time(next), row.Time(last), row.Time(window)
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
