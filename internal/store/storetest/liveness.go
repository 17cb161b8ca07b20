package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

var lvT0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func lvAgent(tb testing.TB, db hub.Store, name string) *hub.Agent {
	tb.Helper()
	a := &hub.Agent{Name: name, CreatedAt: lvT0}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.CreateAgent(a, hub.HashToken(name)) })
	return a
}

func testLivenessStateRoundTrip(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := lvAgent(t, db, "ada")

	// No row yet: the state starts from registration.
	mustView(t, db, func(tx hub.Tx) error {
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		if st.AgentID != a.ID || !st.CreatedAt.Equal(lvT0) || st.ActiveDeepWork != nil {
			t.Errorf("fresh state = %+v", st)
		}
		checkAgentLiveness(t, tx, a.ID)
		return nil
	})
	mustView(t, db, func(tx hub.Tx) error {
		if _, err := tx.LivenessState(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("LivenessState(unknown) = %v, want ENOTFOUND", err)
		}
		if _, _, err := tx.AgentLiveness(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("AgentLiveness(unknown) = %v, want ENOTFOUND", err)
		}
		return nil
	})

	st := hub.NewLivenessState(a.ID, lvT0)
	dw := hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "render", HeartbeatID: "20260301090000",
		StartedAt: lvT0, EndsAt: lvT0.Add(20 * time.Minute), State: hub.DeepWorkActive}
	old := hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "old", StartedAt: lvT0.Add(-time.Hour),
		EndsAt: lvT0.Add(-30 * time.Minute), State: hub.DeepWorkExpired, EndedAt: lvT0.Add(-30 * time.Minute), EndReason: hub.EndedByExpiry}
	mustUpdate(t, db, func(tx hub.Tx) error {
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
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.SaveLivenessState(&st, next) })
	mustView(t, db, func(tx hub.Tx) error {
		checkAgentLiveness(t, tx, a.ID)
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
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.UpdateDeepWork(&dw) })
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.LivenessState(a.ID)
		if err == nil && got.ActiveDeepWork != nil {
			t.Errorf("completed declaration loaded as active: %+v", got.ActiveDeepWork)
		}
		return err
	})

	// Disabled agents are not due.
	a.DisabledAt = lvT0
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.UpdateAgent(a) })
	mustView(t, db, func(tx hub.Tx) error {
		ids, err := tx.DueLiveness(next.Add(time.Hour), 10)
		if len(ids) != 0 {
			t.Errorf("DueLiveness with the agent disabled = %v, want none", ids)
		}
		return err
	})
}

func testDeepWorkOneActive(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := lvAgent(t, db, "bo")
	mk := func() *hub.DeepWork {
		return &hub.DeepWork{AgentID: a.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "x", StartedAt: lvT0, State: hub.DeepWorkActive}
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertDeepWork(mk()) })
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

func testListDeepWorkAndEvents(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a, b := lvAgent(t, db, "ada"), lvAgent(t, db, "bo")
	mustUpdate(t, db, func(tx hub.Tx) error {
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
	mustView(t, db, func(tx hub.Tx) error {
		ds, err := tx.DeepWorkDeclarations(hub.DeepWorkQuery{AgentID: a.ID})
		if err != nil {
			return err
		}
		if len(ds) != 2 || ds[0].ID < ds[1].ID || ds[0].AgentName != "ada" {
			t.Errorf("DeepWorkDeclarations(ada) = %+v, want 2 newest first", ds)
		}
		if ds, _ := tx.DeepWorkDeclarations(hub.DeepWorkQuery{State: hub.DeepWorkActive}); len(ds) != 0 {
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

func testActivityLogsAndCheckpoints(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := lvAgent(t, db, "ada")
	var logIDs, cpIDs []int64
	mustUpdate(t, db, func(tx hub.Tx) error {
		for i := range 3 {
			l := &hub.ActivityLog{AgentID: a.ID, Type: hub.ActivityReflection, Title: "t", Content: []string{"内省した", "line \"2\""},
				Tags: []string{"x"}, HeartbeatID: "20260301090000", CreatedAt: lvT0.Add(time.Duration(i) * time.Second)}
			if err := tx.InsertActivityLog(l); err != nil {
				return err
			}
			c := &hub.Checkpoint{AgentID: a.ID, CurrentActivity: "調査中", HeartbeatID: "20260301090000", CreatedAt: lvT0}
			if err := tx.InsertCheckpoint(c); err != nil {
				return err
			}
			logIDs, cpIDs = append(logIDs, l.ID), append(cpIDs, c.ID)
		}
		return nil
	})
	for _, ids := range [][]int64{logIDs, cpIDs} {
		if len(ids) != 3 || ids[0] == 0 || ids[0] >= ids[1] || ids[1] >= ids[2] {
			t.Errorf("IDs = %v, want 3 increasing IDs", ids)
		}
	}
	// Read back, newest first and bounded.
	mustView(t, db, func(tx hub.Tx) error {
		ls, err := tx.RecentActivityLogs(a.ID, 2)
		if err != nil {
			return err
		}
		if len(ls) != 2 || ls[0].ID != logIDs[2] || ls[1].ID != logIDs[1] || ls[0].Type != hub.ActivityReflection ||
			!slices.Equal(ls[0].Content, []string{"内省した", "line \"2\""}) || !slices.Equal(ls[0].Tags, []string{"x"}) ||
			!ls[0].CreatedAt.Equal(lvT0.Add(2*time.Second)) || ls[0].HeartbeatID != "20260301090000" {
			t.Errorf("RecentActivityLogs = %+v", ls)
		}
		cs, err := tx.RecentCheckpoints(a.ID, 5)
		if err != nil {
			return err
		}
		if len(cs) != 3 || cs[0].ID != cpIDs[2] || cs[2].ID != cpIDs[0] || cs[0].CurrentActivity != "調査中" || !cs[0].CreatedAt.Equal(lvT0) {
			t.Errorf("RecentCheckpoints = %+v", cs)
		}
		if ls, err := tx.RecentActivityLogs(999, 5); err != nil || len(ls) != 0 {
			t.Errorf("RecentActivityLogs(unknown) = %v, %v, want none", ls, err)
		}
		return nil
	})
	// A log of an agent that does not exist is refused.
	err := db.Update(context.Background(), func(tx hub.Tx) error {
		return tx.InsertActivityLog(&hub.ActivityLog{AgentID: 999, Type: hub.ActivityReflection, Title: "t", HeartbeatID: "x", CreatedAt: lvT0})
	})
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("activity log of a missing agent: %v, want ENOTFOUND", err)
	}
}

// OverviewRows reads, in one go, what LivenessState and InboxCounts at the
// agent's own cursor read one agent at a time: for an agent without a
// stored state, one with declarations, a disabled one; every agent by
// name, or those of some IDs (an unknown ID left out).
func testOverviewRows(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ada := lvAgent(t, db, "ada") // no liveness row
	cid, bob := lvAgent(t, db, "cid"), lvAgent(t, db, "bob")
	dw := hub.DeepWork{AgentID: bob.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "render", HeartbeatID: "20260301090000",
		StartedAt: lvT0, EndsAt: lvT0.Add(20 * time.Minute), State: hub.DeepWorkActive}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertDeepWork(&dw); err != nil {
			return err
		}
		st := hub.NewLivenessState(bob.ID, lvT0)
		st.ActiveDeepWork, st.LastCheckpointAt, st.ReflectionDue = &dw, lvT0.Add(time.Minute), true
		st.HealthState, st.HealthKinds = hub.HealthAnomaly, []hub.FindingKind{hub.FindingInactivityAnomaly}
		if err := tx.SaveLivenessState(&st, lvT0.Add(time.Hour)); err != nil {
			return err
		}
		cst := hub.NewLivenessState(cid.ID, lvT0)
		if err := tx.SaveLivenessState(&cst, time.Time{}); err != nil {
			return err
		}
		cid.DisabledAt = lvT0.Add(time.Minute)
		return tx.UpdateAgent(cid)
	})
	m1 := insertMessage(t, db, "", []*hub.Agent{bob, ada}, bob)
	insertMessage(t, db, "", []*hub.Agent{bob})
	mustUpdate(t, db, func(tx hub.Tx) error {
		ada.ReadUpTo = m1
		return tx.UpdateAgent(ada)
	})

	// want is each agent's row as the reads of one agent give it.
	want := func(tx hub.Tx, id int64) hub.OverviewRow {
		a, err := tx.AgentByID(id)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tx.LivenessState(id)
		if err != nil {
			t.Fatal(err)
		}
		u, m, _, err := tx.InboxCounts(id, a.ReadUpTo)
		if err != nil {
			t.Fatal(err)
		}
		return hub.OverviewRow{Agent: a, State: st, Unread: u, Mentions: m}
	}
	check := func(what string, got []hub.OverviewRow, ids ...int64) {
		t.Helper()
		mustView(t, db, func(tx hub.Tx) error {
			if len(got) != len(ids) {
				t.Fatalf("%s: %d rows, want %d", what, len(got), len(ids))
			}
			for i, id := range ids {
				w := want(tx, id)
				g := got[i]
				if !reflect.DeepEqual(g.Agent, w.Agent) || !reflect.DeepEqual(g.State, w.State) || g.Unread != w.Unread || g.Mentions != w.Mentions {
					t.Errorf("%s: row of %s = %+v %+v %d %d\nwant %+v %+v %d %d", what, w.Agent.Name,
						g.Agent, g.State, g.Unread, g.Mentions, w.Agent, w.State, w.Unread, w.Mentions)
				}
			}
			return nil
		})
	}
	var all, some, none []hub.OverviewRow
	mustView(t, db, func(tx hub.Tx) (err error) {
		if all, err = tx.OverviewRows(true, nil); err != nil {
			return err
		}
		if some, err = tx.OverviewRows(false, []int64{bob.ID, 999, ada.ID}); err != nil {
			return err
		}
		none, err = tx.OverviewRows(false, nil)
		return err
	})
	check("every agent, by name", all, ada.ID, bob.ID, cid.ID)
	slices.SortFunc(some, func(a, b hub.OverviewRow) int { return strings.Compare(a.Agent.Name, b.Agent.Name) })
	check("bob, ada and an unknown ID", some, ada.ID, bob.ID)
	check("no ID", none)
	if r := all[1]; r.Unread != 2 || r.Mentions != 1 || r.State.ActiveDeepWork == nil || r.State.ActiveDeepWork.ID != dw.ID {
		t.Errorf("bob: %d unread, %d mentions, deep work %+v; want 2, 1 and the declaration", r.Unread, r.Mentions, r.State.ActiveDeepWork)
	}
	if r := all[0]; r.Unread != 0 || r.State.HealthState != hub.HealthHealthy || !r.State.CreatedAt.Equal(lvT0) {
		t.Errorf("ada (read up to her message, no stored state): %d unread, state %+v", r.Unread, r.State)
	}
	if !all[2].Agent.Disabled() {
		t.Error("cid: not disabled")
	}
}

// checkAgentLiveness compares AgentLiveness with the two reads it stands
// for, AgentByID and LivenessState.
func checkAgentLiveness(t *testing.T, tx hub.Tx, id int64) {
	t.Helper()
	a, st, err := tx.AgentLiveness(id)
	if err != nil {
		t.Errorf("AgentLiveness(%d): %v", id, err)
		return
	}
	wantA, err1 := tx.AgentByID(id)
	wantSt, err2 := tx.LivenessState(id)
	if err := errors.Join(err1, err2); err != nil {
		t.Errorf("AgentByID, LivenessState(%d): %v", id, err)
		return
	}
	if !reflect.DeepEqual(a, wantA) || !reflect.DeepEqual(st, wantSt) {
		t.Errorf("AgentLiveness(%d) = %+v, %+v\nwant %+v, %+v (AgentByID, LivenessState)", id, a, st, wantA, wantSt)
	}
}
