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
	res, err := t.exec(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at, task_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.AgentID, string(l.Type), l.Title, content, tags, l.UrgentReason, l.HeartbeatID, row.Nanos(l.CreatedAt), l.TaskID)
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	l.ID, err = res.LastInsertId()
	return err
}

// InsertCheckpoint implements hub.ActivityTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	res, err := t.exec(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at, task_id) VALUES (?, ?, ?, ?, ?)`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, row.Nanos(c.CreatedAt), c.TaskID)
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	c.ID, err = res.LastInsertId()
	return err
}

// RecentActivityLogs implements hub.ActivityTx.
func (t *Tx) RecentActivityLogs(agentID int64, limit int) ([]*hub.ActivityLog, error) {
	out, err := t.selectActivityLogs(`WHERE agent_id = ? ORDER BY id DESC LIMIT ?`, agentID, limit)
	if err != nil {
		return nil, fmt.Errorf("list activity logs: %w", err)
	}
	return out, nil
}

// selectActivityLogs returns the activity logs chosen by the query's tail
// (WHERE, ORDER BY, LIMIT).
func (t *Tx) selectActivityLogs(tail string, args ...any) ([]*hub.ActivityLog, error) {
	rows, err := t.query(`SELECT id, agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at
		FROM activity_logs `+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.ActivityLog
	for rows.Next() {
		var l hub.ActivityLog
		var typ, content, tags string
		var created int64
		if err := rows.Scan(&l.ID, &l.AgentID, &typ, &l.Title, &content, &tags, &l.UrgentReason, &l.HeartbeatID, &created); err != nil {
			return nil, err
		}
		l.Type, l.CreatedAt = hub.ActivityType(typ), row.Time(created)
		if l.Content, err = parseJSONList(content); err != nil {
			return nil, fmt.Errorf("activity log %d content: %w", l.ID, err)
		}
		if l.Tags, err = parseJSONList(tags); err != nil {
			return nil, fmt.Errorf("activity log %d tags: %w", l.ID, err)
		}
		out = append(out, &l)
	}
	return out, rows.Err()
}

// RecentCheckpoints implements hub.ActivityTx.
func (t *Tx) RecentCheckpoints(agentID int64, limit int) ([]*hub.Checkpoint, error) {
	rows, err := t.query(`SELECT id, agent_id, current_activity, heartbeat_id, created_at
		FROM checkpoints WHERE agent_id = ? ORDER BY id DESC LIMIT ?`, agentID, limit)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	defer rows.Close()
	var out []*hub.Checkpoint
	for rows.Next() {
		var c hub.Checkpoint
		var created int64
		if err := rows.Scan(&c.ID, &c.AgentID, &c.CurrentActivity, &c.HeartbeatID, &created); err != nil {
			return nil, fmt.Errorf("list checkpoints: %w", err)
		}
		c.CreatedAt = row.Time(created)
		out = append(out, &c)
	}
	return out, rows.Err()
}
