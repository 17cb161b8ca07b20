package postgres

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.ActivityTx.

// InsertActivityLog implements hub.ActivityTx.
func (t *Tx) InsertActivityLog(l *hub.ActivityLog) error {
	err := t.queryRow(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at, task_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		l.AgentID, string(l.Type), l.Title, list(l.Content), list(l.Tags), l.UrgentReason, l.HeartbeatID, row.Nanos(l.CreatedAt), l.TaskID).Scan(&l.ID)
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	return nil
}

// InsertCheckpoint implements hub.ActivityTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	err := t.queryRow(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at, task_id) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, row.Nanos(c.CreatedAt), c.TaskID).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	return nil
}

// RecentActivityLogs implements hub.ActivityTx.
func (t *Tx) RecentActivityLogs(agentID int64, limit int) ([]*hub.ActivityLog, error) {
	rows, err := t.query(`SELECT id, agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at
		FROM activity_logs WHERE agent_id = $1 ORDER BY id DESC LIMIT $2`, agentID, limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.ActivityLog, error) {
		var l hub.ActivityLog
		var typ string
		var created int64
		if err := r.Scan(&l.ID, &l.AgentID, &typ, &l.Title, &l.Content, &l.Tags, &l.UrgentReason, &l.HeartbeatID, &created); err != nil {
			return nil, err
		}
		l.Type, l.CreatedAt, l.Content, l.Tags = hub.ActivityType(typ), row.Time(created), unlist(l.Content), unlist(l.Tags)
		return &l, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list activity logs: %w", err)
	}
	return out, nil
}

// RecentCheckpoints implements hub.ActivityTx.
func (t *Tx) RecentCheckpoints(agentID int64, limit int) ([]*hub.Checkpoint, error) {
	rows, err := t.query(`SELECT id, agent_id, current_activity, heartbeat_id, created_at
		FROM checkpoints WHERE agent_id = $1 ORDER BY id DESC LIMIT $2`, agentID, limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.Checkpoint, error) {
		var c hub.Checkpoint
		var created int64
		if err := r.Scan(&c.ID, &c.AgentID, &c.CurrentActivity, &c.HeartbeatID, &created); err != nil {
			return nil, err
		}
		c.CreatedAt = row.Time(created)
		return &c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	return out, nil
}
