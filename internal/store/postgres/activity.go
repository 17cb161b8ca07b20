package postgres

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.ActivityTx.

// InsertActivityLog implements hub.ActivityTx.
func (t *Tx) InsertActivityLog(l *hub.ActivityLog) error {
	err := t.queryRow(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		l.AgentID, string(l.Type), l.Title, list(l.Content), list(l.Tags), l.UrgentReason, l.HeartbeatID, row.Nanos(l.CreatedAt)).Scan(&l.ID)
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	return nil
}

// InsertCheckpoint implements hub.ActivityTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	err := t.queryRow(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, row.Nanos(c.CreatedAt)).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	return nil
}
