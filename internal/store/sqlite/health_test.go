package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
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
// tests read back).
func (t *Tx) activityLogs(agentID int64) ([]*hub.ActivityLog, error) {
	ls, err := t.RecentActivityLogs(agentID, -1)
	slices.Reverse(ls)
	return ls, err
}
