package storesql

import (
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements the activity logs and checkpoints of hub.ActivityTx.

// InsertActivityLog implements hub.ActivityTx.
func (x Statements) InsertActivityLog(l *hub.ActivityLog) error {
	err := x.DB.QueryRow(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at, task_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		l.AgentID, string(l.Type), l.Title, x.Dialect.List(l.Content), x.Dialect.List(l.Tags), l.UrgentReason, l.HeartbeatID,
		row.Nanos(l.CreatedAt), l.TaskID).Scan(&l.ID)
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	return nil
}

// InsertCheckpoint implements hub.ActivityTx.
func (x Statements) InsertCheckpoint(c *hub.Checkpoint) error {
	err := x.DB.QueryRow(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at, task_id) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, row.Nanos(c.CreatedAt), c.TaskID).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	return nil
}

// RecentActivityLogs implements hub.ActivityTx.
func (x Statements) RecentActivityLogs(agentID int64, limit int) ([]*hub.ActivityLog, error) {
	out, err := all(x.DB, func(s row.Scanner) (*hub.ActivityLog, error) {
		var l hub.ActivityLog
		var typ string
		var created int64
		if err := s.Scan(&l.ID, &l.AgentID, &typ, &l.Title, x.Dialect.ListDest(&l.Content), x.Dialect.ListDest(&l.Tags),
			&l.UrgentReason, &l.HeartbeatID, &created); err != nil {
			return nil, err
		}
		l.Type, l.CreatedAt, l.Content, l.Tags = hub.ActivityType(typ), row.Time(created), unlist(l.Content), unlist(l.Tags)
		return &l, nil
	}, `SELECT id, agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at
		FROM activity_logs WHERE agent_id = ? ORDER BY id DESC LIMIT ?`, agentID, limit)
	if err != nil {
		return nil, fmt.Errorf("list activity logs: %w", err)
	}
	return out, nil
}

// RecentCheckpoints implements hub.ActivityTx.
func (x Statements) RecentCheckpoints(agentID int64, limit int) ([]*hub.Checkpoint, error) {
	out, err := all(x.DB, func(s row.Scanner) (*hub.Checkpoint, error) {
		var c hub.Checkpoint
		var created int64
		err := s.Scan(&c.ID, &c.AgentID, &c.CurrentActivity, &c.HeartbeatID, &created)
		c.CreatedAt = row.Time(created)
		return &c, err
	}, `SELECT id, agent_id, current_activity, heartbeat_id, created_at
		FROM checkpoints WHERE agent_id = ? ORDER BY id DESC LIMIT ?`, agentID, limit)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	return out, nil
}
