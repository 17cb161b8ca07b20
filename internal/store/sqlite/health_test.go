package sqlite

import (
	"context"
	"fmt"
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

func TestLivenessStateRoundTrip(t *testing.T) {
	t.Parallel()
	db := lvOpen(t)
	a := lvAgent(t, db, "ada")

	// No row yet: the state starts from registration.
	lvView(t, db, func(tx *Tx) error {
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		if st.AgentID != a.ID || !st.CreatedAt.Equal(lvT0) || st.ActiveDeepWork != nil {
			t.Errorf("fresh state = %+v", st)
		}
		return nil
	})
	lvView(t, db, func(tx *Tx) error {
		if _, err := tx.LivenessState(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("LivenessState(unknown) = %v, want ENOTFOUND", err)
		}
		return nil
	})

	st := hub.NewLivenessState(a.ID, lvT0)
	dw := hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "render", HeartbeatID: "20260301090000",
		StartedAt: lvT0, EndsAt: lvT0.Add(20 * time.Minute), State: hub.DeepWorkActive}
	old := hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "old", StartedAt: lvT0.Add(-time.Hour),
		EndsAt: lvT0.Add(-30 * time.Minute), State: hub.DeepWorkExpired, EndedAt: lvT0.Add(-30 * time.Minute), EndReason: hub.EndedByExpiry}
	lvUpdate(t, db, func(tx *Tx) error {
		if err := tx.InsertDeepWork(&old); err != nil {
			return err
		}
		return tx.InsertDeepWork(&dw)
	})
	st.ActiveDeepWork, st.ExpiredDeepWork = &dw, &old
	st.LastActivityLogAt, st.LastCheckpointAt, st.LastReflectionAt = lvT0.Add(time.Minute), lvT0.Add(2*time.Minute), lvT0.Add(3*time.Minute)
	st.ReflectionDue, st.ReflectionDueSince, st.ReflectionSkippedAt = true, lvT0.Add(4*time.Minute), lvT0.Add(5*time.Minute)
	st.DeepWorkEndedAt = lvT0.Add(6 * time.Minute)
	st.HealthState, st.HealthKinds = hub.HealthAnomaly, []hub.FindingKind{hub.FindingInactivityAnomaly, hub.FindingReflectionSkipped}
	next := lvT0.Add(7 * time.Minute)
	lvUpdate(t, db, func(tx *Tx) error { return tx.SaveLivenessState(&st, next) })
	lvView(t, db, func(tx *Tx) error {
		got, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		if got.ActiveDeepWork == nil || got.ActiveDeepWork.ID != dw.ID || got.ActiveDeepWork.AgentName != "ada" || !got.ActiveDeepWork.EndsAt.Equal(dw.EndsAt) {
			t.Errorf("active deep work = %+v", got.ActiveDeepWork)
		}
		if got.ExpiredDeepWork == nil || got.ExpiredDeepWork.ID != old.ID || got.ExpiredDeepWork.State != hub.DeepWorkExpired {
			t.Errorf("expired deep work = %+v", got.ExpiredDeepWork)
		}
		got.ActiveDeepWork, got.ExpiredDeepWork = nil, nil
		want := st
		want.ActiveDeepWork, want.ExpiredDeepWork = nil, nil
		if !got.LastActivityLogAt.Equal(want.LastActivityLogAt) || !got.LastCheckpointAt.Equal(want.LastCheckpointAt) ||
			!got.LastReflectionAt.Equal(want.LastReflectionAt) || got.ReflectionDue != want.ReflectionDue ||
			!got.ReflectionDueSince.Equal(want.ReflectionDueSince) || !got.ReflectionSkippedAt.Equal(want.ReflectionSkippedAt) ||
			!got.DeepWorkEndedAt.Equal(want.DeepWorkEndedAt) || got.HealthState != want.HealthState || !slices.Equal(got.HealthKinds, want.HealthKinds) {
			t.Errorf("state = %+v\nwant %+v", got, want)
		}
		for _, tc := range []struct {
			at   time.Time
			want []int64
		}{{next.Add(-time.Nanosecond), nil}, {next, []int64{a.ID}}} {
			ids, err := tx.DueLiveness(tc.at, 10)
			if err != nil {
				return err
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("DueLiveness(%v) = %v, want %v", tc.at, ids, tc.want)
			}
		}
		return nil
	})

	// A completed declaration is history: it is never loaded as active.
	dw.State, dw.EndedAt, dw.EndReason = hub.DeepWorkCompleted, lvT0.Add(10*time.Minute), hub.EndedByActivityLog
	lvUpdate(t, db, func(tx *Tx) error { return tx.UpdateDeepWork(&dw) })
	lvView(t, db, func(tx *Tx) error {
		got, err := tx.LivenessState(a.ID)
		if err == nil && got.ActiveDeepWork != nil {
			t.Errorf("completed declaration loaded as active: %+v", got.ActiveDeepWork)
		}
		return err
	})

	// Disabled agents are not due.
	a.DisabledAt = lvT0
	lvUpdate(t, db, func(tx *Tx) error { return tx.UpdateAgent(a) })
	lvView(t, db, func(tx *Tx) error {
		ids, err := tx.DueLiveness(next.Add(time.Hour), 10)
		if len(ids) != 0 {
			t.Errorf("DueLiveness with the agent disabled = %v, want none", ids)
		}
		return err
	})
}

func TestDeepWorkOneActive(t *testing.T) {
	t.Parallel()
	db := lvOpen(t)
	a := lvAgent(t, db, "bo")
	mk := func() *hub.DeepWork {
		return &hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "x", StartedAt: lvT0, State: hub.DeepWorkActive}
	}
	lvUpdate(t, db, func(tx *Tx) error { return tx.InsertDeepWork(mk()) })
	err := db.Update(context.Background(), func(tx hub.Tx) error { return tx.InsertDeepWork(mk()) })
	if hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("second active declaration: %v, want ECONFLICT", err)
	}
	if err := db.Update(context.Background(), func(tx hub.Tx) error {
		return tx.UpdateDeepWork(&hub.DeepWork{ID: 424242, State: hub.DeepWorkCompleted})
	}); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("UpdateDeepWork(unknown) = %v, want ENOTFOUND", err)
	}
}

func TestListDeepWorkAndEvents(t *testing.T) {
	t.Parallel()
	db := lvOpen(t)
	a, b := lvAgent(t, db, "ada"), lvAgent(t, db, "bo")
	lvUpdate(t, db, func(tx *Tx) error {
		for i, ag := range []*hub.Agent{a, b, a} {
			d := &hub.DeepWork{AgentID: ag.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "x", StartedAt: lvT0.Add(time.Duration(i) * time.Minute), State: hub.DeepWorkCompleted}
			if err := tx.InsertDeepWork(d); err != nil {
				return err
			}
		}
		for i := range 5 {
			e := &hub.Event{AgentID: a.ID, Kind: hub.EventHealthChanged, Detail: "d", CreatedAt: lvT0.Add(time.Duration(i) * time.Minute)}
			if i == 2 {
				e.AgentID, e.Kind = 0, "cron_disabled"
			}
			if err := tx.InsertEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	lvView(t, db, func(tx *Tx) error {
		ds, err := tx.ListDeepWork(hub.DeepWorkQuery{AgentID: a.ID})
		if err != nil {
			return err
		}
		if len(ds) != 2 || ds[0].ID < ds[1].ID || ds[0].AgentName != "ada" {
			t.Errorf("ListDeepWork(ada) = %+v, want 2 newest first", ds)
		}
		if ds, _ := tx.ListDeepWork(hub.DeepWorkQuery{State: hub.DeepWorkActive}); len(ds) != 0 {
			t.Errorf("active declarations = %d, want 0", len(ds))
		}

		ids := func(evs []*hub.Event) []int64 {
			out := make([]int64, len(evs))
			for i, e := range evs {
				out[i] = e.ID
			}
			return out
		}
		for _, tc := range []struct {
			name string
			q    hub.EventQuery
			want []int64
		}{
			{"all", hub.EventQuery{}, []int64{1, 2, 3, 4, 5}},
			{"newest 2", hub.EventQuery{Limit: 2}, []int64{4, 5}},
			{"after 2, first 2", hub.EventQuery{AfterID: 2, Limit: 2}, []int64{3, 4}},
			{"agent", hub.EventQuery{AgentID: a.ID}, []int64{1, 2, 4, 5}},
			{"kind", hub.EventQuery{Kind: "cron_disabled"}, []int64{3}},
			{"since", hub.EventQuery{Since: lvT0.Add(3 * time.Minute)}, []int64{4, 5}},
		} {
			evs, err := tx.ListEvents(tc.q)
			if err != nil {
				return err
			}
			if got := ids(evs); !slices.Equal(got, tc.want) {
				t.Errorf("ListEvents(%s) = %v, want %v", tc.name, got, tc.want)
			}
		}
		evs, _ := tx.ListEvents(hub.EventQuery{Kind: "cron_disabled"})
		if len(evs) == 1 && (evs[0].AgentID != 0 || evs[0].AgentName != "") {
			t.Errorf("hub-wide event = %+v", evs[0])
		}
		return nil
	})
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
		l.Type, l.CreatedAt = hub.ActivityType(typ), fromNanos(created)
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
