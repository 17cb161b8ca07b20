package storetest

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testUsage: rollups sum by agent, time, task and model; a report groups
// and filters them; the held task is the claimed one (the latest claimed
// of several); old rows go in batches.
func testUsage(t *testing.T, h NewDB) {
	db := fresh(t, h)
	a, b := createAgent(t, db, "alice"), createAgent(t, db, "bob")
	task := &hub.Task{Project: hub.DefaultProject, Title: "port the parser", State: hub.TaskClaimed, Priority: hub.PriorityNormal, Creator: "admin",
		AssigneeID: a.ID, CreatedAt: t0, ClaimedAt: t0, UpdatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertTask(task) })
	var held, none int64
	readHeld := func() {
		mustView(t, db, func(tx hub.Tx) (err error) {
			if held, err = tx.HeldTask(a.ID); err != nil {
				return err
			}
			none, err = tx.HeldTask(b.ID)
			return err
		})
	}
	readHeld()
	if held != task.ID || none != 0 {
		t.Fatalf("held tasks = %d, %d; want %d, 0", held, none, task.ID)
	}
	// Of several, the latest claimed; a task done is held no more.
	later, done := *task, *task
	later.Title, later.ClaimedAt = "port the lexer", t0.Add(time.Hour)
	done.Title, done.State, done.ClaimedAt = "port the printer", hub.TaskDone, t0.Add(2*time.Hour)
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertTask(&later); err != nil {
			return err
		}
		return tx.InsertTask(&done)
	})
	readHeld()
	if held != later.ID || none != 0 {
		t.Fatalf("held tasks of several = %d, %d; want the latest claimed %d, 0", held, none, later.ID)
	}
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	m1, m2 := day.Add(3*time.Hour), day.Add(3*time.Hour+time.Minute)
	row := func(ag *hub.Agent, at time.Time, task int64, model string, in int64, cost float64) hub.UsageRollup {
		return hub.UsageRollup{AgentID: ag.ID, Project: hub.DefaultProject, At: at, TaskID: task, Model: model,
			Counts: hub.UsageCounts{Input: in, Output: 2 * in, CacheRead: 3 * in, CacheCreation: 4 * in, Requests: 1, CostUSD: cost}}
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.AddUsage([]hub.UsageRollup{row(a, m1, task.ID, "sonnet", 10, 0.5), row(a, m2, task.ID, "haiku", 1, 0.25), row(b, m1, 0, "sonnet", 100, 1)},
			[]hub.UsageRollup{row(a, day, task.ID, "sonnet", 10, 0.5), row(a, day, task.ID, "haiku", 1, 0.25), row(b, day, 0, "sonnet", 100, 1)})
	})
	// The same key again sums.
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.AddUsage([]hub.UsageRollup{row(a, m1, task.ID, "sonnet", 5, 0.5)}, []hub.UsageRollup{row(a, day, task.ID, "sonnet", 5, 0.5)})
	})
	report := func(q hub.UsageQuery) []hub.UsageRow {
		var rows []hub.UsageRow
		mustView(t, db, func(tx hub.Tx) (err error) { rows, err = tx.UsageReport(q); return err })
		return rows
	}
	span := hub.UsageQuery{Since: day, Until: day.Add(24 * time.Hour)}
	byAgent := span
	byAgent.GroupBy = []hub.UsageGroup{hub.UsageByAgent}
	rows := report(byAgent)
	if len(rows) != 2 || rows[0].Agent != "alice" || rows[1].Agent != "bob" {
		t.Fatalf("by agent = %+v, want alice and bob", rows)
	}
	want := hub.UsageCounts{Input: 16, Output: 32, CacheRead: 48, CacheCreation: 64, Requests: 3, CostUSD: 1.25}
	if rows[0].Counts != want {
		t.Errorf("alice = %+v, want %+v", rows[0].Counts, want)
	}
	days := byAgent
	days.Days = true
	if got := report(days); len(got) != 2 || got[0].Counts != want {
		t.Errorf("alice's days = %+v, want %+v", got, want)
	}
	q := span
	q.GroupBy, q.AgentID = []hub.UsageGroup{hub.UsageByTask, hub.UsageByModel, hub.UsageByDay, hub.UsageByProject}, a.ID
	rows = report(q)
	if len(rows) != 2 || rows[0].Model != "haiku" || rows[0].TaskTitle != "port the parser" || rows[0].TaskID != task.ID ||
		!rows[0].Day.Equal(day) || rows[0].Project != hub.DefaultProject || rows[0].Agent != "" || rows[1].Counts.Input != 15 {
		t.Errorf("alice by task, model, day, project = %+v", rows)
	}
	late := byAgent
	late.Since = m2
	if got := report(late); len(got) != 1 || got[0].Counts.Input != 1 {
		t.Errorf("since the second minute = %+v, want alice's 1 input", got)
	}
	// Retention: minutes before m2 go, days stay.
	usageBefore := func(minutes, days time.Time) (due bool) {
		mustView(t, db, func(tx hub.Tx) (err error) { due, err = tx.UsageBefore(minutes, days); return err })
		return due
	}
	if !usageBefore(m2, time.Time{}) || usageBefore(time.Time{}, time.Time{}) || usageBefore(time.Time{}, day) {
		t.Errorf("UsageBefore(m2, none), (none, none), (none, the first day) = %v, %v, %v; want true, false, false",
			usageBefore(m2, time.Time{}), usageBefore(time.Time{}, time.Time{}), usageBefore(time.Time{}, day))
	}
	var n int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) { n, err = tx.DeleteUsageBefore(m2, time.Time{}, 100); return err })
	if n != 2 {
		t.Errorf("deleted %d minutes, want 2", n)
	}
	if usageBefore(m2, time.Time{}) || !usageBefore(time.Time{}, day.Add(time.Hour)) {
		t.Errorf("after pruning minutes, UsageBefore(m2, none), (none, after the first day) = %v, %v; want false, true",
			usageBefore(m2, time.Time{}), usageBefore(time.Time{}, day.Add(time.Hour)))
	}
	if got := report(byAgent); len(got) != 1 {
		t.Errorf("after pruning minutes = %+v, want alice's last minute", got)
	}
	if got := report(days); len(got) != 2 {
		t.Errorf("after pruning minutes, days = %+v, want both agents", got)
	}
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		n, err = tx.DeleteUsageBefore(time.Time{}, day.Add(time.Hour), 100)
		return err
	})
	if got := report(days); n != 3 || len(got) != 0 {
		t.Errorf("after pruning days: deleted %d, left %+v; want 3, none", n, got)
	}
}

// testUsageByHour: a report by hour sums an agent's minutes per hour, the
// hour's start in each row.
func testUsageByHour(t *testing.T, h NewDB) {
	db := fresh(t, h)
	a := createAgent(t, db, "alice")
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	minute := func(at time.Time, in int64, cost float64) hub.UsageRollup {
		return hub.UsageRollup{AgentID: a.ID, Project: hub.DefaultProject, At: at, Model: "sonnet", Counts: hub.UsageCounts{Input: in, Requests: 1, CostUSD: cost}}
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.AddUsage([]hub.UsageRollup{minute(day.Add(3*time.Hour), 10, 0.5), minute(day.Add(3*time.Hour+59*time.Minute), 5, 0.25),
			minute(day.Add(5*time.Hour+time.Minute), 7, 1)}, nil)
	})
	var rows []hub.UsageRow
	mustView(t, db, func(tx hub.Tx) (err error) {
		rows, err = tx.UsageReport(hub.UsageQuery{GroupBy: []hub.UsageGroup{hub.UsageByAgent, hub.UsageByHour}, Since: day, Until: day.Add(24 * time.Hour)})
		return err
	})
	if len(rows) != 2 || rows[0].Agent != "alice" || !rows[0].Hour.Equal(day.Add(3*time.Hour)) || !rows[1].Hour.Equal(day.Add(5*time.Hour)) ||
		rows[0].Counts != (hub.UsageCounts{Input: 15, Requests: 2, CostUSD: 0.75}) || rows[1].Counts.Input != 7 || !rows[0].Day.IsZero() {
		t.Errorf("alice by hour = %+v, want 15 input tokens at 03:00 and 7 at 05:00", rows)
	}
}
