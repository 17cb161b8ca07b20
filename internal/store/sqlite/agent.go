package sqlite

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentTx's writes of many rows (storesql the
// rest).

// TouchAgents implements hub.AgentTx. The orchestrator flushes every
// caller of the last tick, so the touches are written in multi-row
// statements (execRows), each agent once with its latest values.
func (t *Tx) TouchAgents(touches []hub.Touch) error {
	latest := make(map[int64]int, len(touches)) // agent → its row in args
	args := make([]any, 0, 4*len(touches))
	for _, to := range touches {
		seen, beat, ended := row.Nanos(to.LastSeenAt), to.LastInteractionBeat, row.Nanos(to.SessionEndedAt)
		if i, ok := latest[to.AgentID]; ok {
			args[4*i+1], args[4*i+2] = max(args[4*i+1].(int64), seen), max(args[4*i+2].(int64), beat)
			args[4*i+3] = max(args[4*i+3].(int64), ended)
			continue
		}
		latest[to.AgentID] = len(args) / 4
		args = append(args, to.AgentID, seen, beat, ended)
	}
	return t.execRows("touch agents", `UPDATE agents SET last_seen_at = MAX(last_seen_at, v.column2),
		last_interaction_beat = MAX(last_interaction_beat, v.column3), session_ended_at = MAX(session_ended_at, v.column4) FROM (VALUES `,
		`) AS v WHERE agents.id = v.column1`, 4, args, nil)
}
