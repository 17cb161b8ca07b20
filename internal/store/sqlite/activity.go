package sqlite

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// InsertActivityLog implements hub.ActivityTx.
func (t *Tx) InsertActivityLog(l *hub.ActivityLog) error {
	content, err := jsonList(l.Content)
	if err != nil {
		return err
	}
	tags, err := jsonList(l.Tags)
	if err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		l.AgentID, string(l.Type), l.Title, content, tags, l.UrgentReason, l.HeartbeatID, row.Nanos(l.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	l.ID, err = res.LastInsertId()
	return err
}

// InsertCheckpoint implements hub.ActivityTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	res, err := t.exec(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at) VALUES (?, ?, ?, ?)`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, row.Nanos(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	c.ID, err = res.LastInsertId()
	return err
}
