package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

var lvT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func lvOpen(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "hub.db"), Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func lvUpdate(tb testing.TB, db *DB, fn func(tx *Tx) error) {
	tb.Helper()
	if err := db.Update(context.Background(), func(tx hub.Tx) error { return fn(tx.(*Tx)) }); err != nil {
		tb.Fatal(err)
	}
}

func lvView(tb testing.TB, db *DB, fn func(tx *Tx) error) {
	tb.Helper()
	if err := db.View(context.Background(), func(tx hub.Tx) error { return fn(tx.(*Tx)) }); err != nil {
		tb.Fatal(err)
	}
}

func lvAgent(tb testing.TB, db *DB, name string) *hub.Agent {
	tb.Helper()
	a := &hub.Agent{Name: name, CreatedAt: lvT0}
	lvUpdate(tb, db, func(tx *Tx) error { return tx.CreateAgent(a, hub.HashToken(name)) })
	return a
}

func TestActivityLogsAndCheckpoints(t *testing.T) {
	t.Parallel()
	db := lvOpen(t)
	a := lvAgent(t, db, "ada")
	l := &hub.ActivityLog{AgentID: a.ID, Type: hub.ActivityReflection, Title: "t", Content: []string{"内省した", "line \"2\""}, Tags: []string{"x"}, HeartbeatID: "20260301090000", CreatedAt: lvT0}
	c := &hub.Checkpoint{AgentID: a.ID, CurrentActivity: "調査中", HeartbeatID: "20260301090000", CreatedAt: lvT0}
	lvUpdate(t, db, func(tx *Tx) error {
		if err := tx.InsertActivityLog(l); err != nil {
			return err
		}
		return tx.InsertCheckpoint(c)
	})
	if l.ID == 0 || c.ID == 0 {
		t.Fatalf("IDs not set: log %d checkpoint %d", l.ID, c.ID)
	}
	lvView(t, db, func(tx *Tx) error {
		ls, err := tx.activityLogs(a.ID)
		if err != nil {
			return err
		}
		if len(ls) != 1 || !slices.Equal(ls[0].Content, l.Content) || !slices.Equal(ls[0].Tags, l.Tags) || ls[0].Type != hub.ActivityReflection || !ls[0].CreatedAt.Equal(lvT0) {
			t.Errorf("activityLogs = %+v", ls)
		}
		return nil
	})
}

// activityLogs returns an agent's activity logs, oldest first (what the
// tests read back; not part of hub.Tx).
func (t *Tx) activityLogs(agentID int64) ([]*hub.ActivityLog, error) {
	rows, err := t.query(`SELECT id, agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at
		FROM activity_logs WHERE agent_id = ? ORDER BY id`, agentID)
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
