package hub_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestRateLimitedAgentGetsNoTask: a host's report of rate limiting shows
// in the agent's status and next_task hands it nothing until the limit
// lifts (a minute when the host says no reset, its reset when it does).
func TestRateLimitedAgentGetsNoTask(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "work"}); err != nil {
		t.Fatal(err)
	}
	now := h.Clock.Now()
	h.Usage.NoteRateLimit(ann, now.Add(-10*time.Second), time.Time{})
	st, err := h.Status(ctx, ann)
	if want := now.Add(50 * time.Second); err != nil || !st.RateLimitedUntil.Equal(want) {
		t.Fatalf("status rate limited until %v (%v), want %v", st.RateLimitedUntil, err, want)
	}
	r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{})
	if err != nil || r.Task != nil {
		t.Fatalf("next_task while rate limited = %+v, %v; want nothing", r, err)
	}
	h.Clock.Advance(51 * time.Second)
	if st, _ := h.Status(ctx, ann); !st.RateLimitedUntil.IsZero() {
		t.Errorf("status after the limit lifted: rate limited until %v", st.RateLimitedUntil)
	}
	if r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{}); err != nil || r.Task == nil {
		t.Fatalf("next_task after the limit lifted = %+v, %v; want the task", r, err)
	}
	// A reset the host names holds the agent until then; an earlier
	// report does not shorten it.
	now = h.Clock.Now()
	h.Usage.NoteRateLimit(ann, now, now.Add(10*time.Minute))
	h.Usage.NoteRateLimit(ann, now, time.Time{})
	if st, _ := h.Status(ctx, ann); !st.RateLimitedUntil.Equal(now.Add(10 * time.Minute)) {
		t.Errorf("rate limited until %v, want the reset %v", st.RateLimitedUntil, now.Add(10*time.Minute))
	}
}

// TestUsageRecordReportPrune: usage recorded under the task held, reported
// from the minutes or (past their retention) the days, and pruned.
func TestUsageRecordReportPrune(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.UsageRetention = hub.UsageRetention{Minutes: time.Hour, Days: 48 * time.Hour} })
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "parser"}); err != nil {
		t.Fatal(err)
	}
	task, err := h.Tasks.Next(ctx, ann, hub.NextRequest{})
	if err != nil || task.Task == nil {
		t.Fatal(task, err)
	}
	now := h.Clock.Now()
	deltas := []hub.UsageDelta{
		{At: now, Model: "m", Counts: hub.UsageCounts{Input: 10, Requests: 1, CostUSD: 0.5}},
		{At: now.Add(-48 * time.Hour), Model: "m", Counts: hub.UsageCounts{Output: 5}}, // too old: counted now
	}
	if err := h.Usage.Record(ctx, ann, deltas, ""); err != nil {
		t.Fatal(err)
	}
	rows, err := h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: []hub.UsageGroup{hub.UsageByTask}})
	if want := (hub.UsageCounts{Input: 10, Output: 5, Requests: 1, CostUSD: 0.5}); err != nil || len(rows) != 1 || rows[0].TaskID != task.Task.ID || rows[0].Counts != want {
		t.Fatalf("report = %+v, %v; want task %d with %+v", rows, err, task.Task.ID, want)
	}
	if _, err := h.Usage.Report(ctx, nil, hub.UsageQuery{Since: now, Until: now.Add(-time.Hour)}); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("a span backwards: %v, want EINVALID", err)
	}
	h.Clock.Advance(2 * time.Hour)
	if n, err := h.Usage.PruneBatch(ctx, h.Clock.Now(), 100); err != nil || n != 1 {
		t.Errorf("pruned %d (%v), want the 1 minute past its hour", n, err)
	}
	// Since three hours back is past the minutes kept: the days answer.
	rows, err = h.Usage.Report(ctx, nil, hub.UsageQuery{Since: h.Clock.Now().Add(-3 * time.Hour)})
	if err != nil || len(rows) != 1 || rows[0].Agent != "ann" || rows[0].Counts.Input != 10 {
		t.Errorf("report from the days = %+v, %v; want ann's 10 input", rows, err)
	}
	// By hour only from the minutes: a span past them is refused.
	hours := []hub.UsageGroup{hub.UsageByHour}
	if _, err := h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: hours, Since: h.Clock.Now().Add(-3 * time.Hour)}); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("by hour past the minutes kept: %v, want EINVALID", err)
	}
	if _, err := h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: hours, Since: h.Clock.Now().Add(-time.Hour)}); err != nil {
		t.Errorf("by hour within the minutes kept: %v", err)
	}
	h.Clock.Advance(72 * time.Hour)
	if n, err := h.Usage.PruneBatch(ctx, h.Clock.Now(), 100); err != nil || n != 1 {
		t.Errorf("pruned %d (%v), want the day past its 48 h", n, err)
	}
}

// TestUsageTakenBackUnderAnotherTask: what a session's metrics counted
// while the agent held no task is taken back when its events come, after
// the agent claimed one: the rows that held it lose it, and no row goes
// below zero.
func TestUsageTakenBackUnderAnotherTask(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	now := h.Clock.Now()
	if err := h.Usage.Record(ctx, ann, []hub.UsageDelta{{At: now, Model: "m", Counts: hub.UsageCounts{Input: 10, Requests: 1, CostUSD: 0.5}}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "parser"}); err != nil {
		t.Fatal(err)
	}
	task, err := h.Tasks.Next(ctx, ann, hub.NextRequest{})
	if err != nil || task.Task == nil {
		t.Fatal(task, err)
	}
	// The events: the metrics' count taken back, the events' own counted.
	if err := h.Usage.Record(ctx, ann, []hub.UsageDelta{
		{At: now, Model: "m", Counts: hub.UsageCounts{Input: -10, Requests: -1, CostUSD: -0.5}},
		{At: now, Model: "m", Counts: hub.UsageCounts{Input: 6, Requests: 1, CostUSD: 0.25}},
	}, ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []hub.UsageQuery{{GroupBy: []hub.UsageGroup{hub.UsageByTask}}, {GroupBy: []hub.UsageGroup{hub.UsageByTask}, Since: now.Add(-30 * 24 * time.Hour)}} {
		rows, err := h.Usage.Report(ctx, nil, q)
		want := hub.UsageCounts{Input: 6, Requests: 1, CostUSD: 0.25}
		if err != nil || len(rows) != 1 || rows[0].TaskID != task.Task.ID || rows[0].Counts != want {
			t.Errorf("by task (days %v) = %+v, %v; want only task %d with %+v", !q.Since.IsZero(), rows, err, task.Task.ID, want)
		}
	}
}

// TestUsageTodayByAgentEveryAgent: what each agent spent today, as the
// dashboard's agents list asks it (grouped by agent since the UTC day's
// start), has a row for every agent that spent, past the rows a report
// grouped otherwise is bounded to, each read from the agent's day rows
// (what the minutes sum to, however many there are).
func TestUsageTodayByAgentEveryAgent(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	now := h.Clock.Now()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	const n = hub.UsageReportMax + 1
	err := h.DB.Update(ctx, func(tx hub.Tx) error {
		var days []hub.UsageRollup
		for i := range n {
			a := &hub.Agent{Name: fmt.Sprintf("a%05d", i), CreatedAt: now}
			if err := tx.CreateAgent(a, hub.HashToken(a.Name)); err != nil {
				return err
			}
			days = append(days, hub.UsageRollup{AgentID: a.ID, At: day, Model: "m", Counts: hub.UsageCounts{Input: int64(i), Requests: 1}})
		}
		return tx.AddUsage(nil, days) // the day rows alone: the minutes are not read
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: []hub.UsageGroup{hub.UsageByAgent}, Since: day})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n {
		t.Fatalf("today by agent: %d rows, want one per agent, %d", len(rows), n)
	}
	for i, r := range rows {
		if want := (hub.UsageCounts{Input: int64(i), Requests: 1}); r.Agent != fmt.Sprintf("a%05d", i) || r.Counts != want {
			t.Fatalf("row %d = %s %+v, want a%05d %+v", i, r.Agent, r.Counts, i, want)
		}
	}
	rows, err = h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: []hub.UsageGroup{hub.UsageByAgent, hub.UsageByModel}, Since: day})
	if err != nil || len(rows) != hub.UsageReportMax {
		t.Errorf("today by agent and model: %d rows (%v), want the bound %d", len(rows), err, hub.UsageReportMax)
	}
}

// updateCounter is a store that counts its write transactions.
type updateCounter struct {
	hub.Store
	updates atomic.Int32
}

func (s *updateCounter) Update(ctx context.Context, fn func(hub.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, fn)
}

// TestUsageRecordIsOneWrite: what one export reports (usage under the
// task held, held against the agent's budget, and the tools its host ran
// as its activity) is kept in one write transaction; tools alone are
// filed as the agent's checkpoint too, and an export of nothing writes
// nothing.
func TestUsageRecordIsOneWrite(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "parser"}); err != nil {
		t.Fatal(err)
	}
	if r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{}); err != nil || r.Task == nil {
		t.Fatal(r, err)
	}
	if _, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "ann", USDPerDay: 1}); err != nil {
		t.Fatal(err)
	}
	st := &updateCounter{Store: h.DB}
	svc := h.over(t, st)
	now := h.Clock.Now()
	deltas := []hub.UsageDelta{{At: now, Model: "m", Counts: hub.UsageCounts{Input: 10, Requests: 1, CostUSD: 0.9}}}
	if err := svc.Usage.Record(ctx, ann, deltas, "tools run (host telemetry): Bash"); err != nil {
		t.Fatal(err)
	}
	if n := st.updates.Load(); n != 1 {
		t.Errorf("an export of usage and tools took %d write transactions, want 1", n)
	}
	rows, err := h.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: []hub.UsageGroup{hub.UsageByTask}})
	if err != nil || len(rows) != 1 || rows[0].TaskID == 0 || rows[0].Counts.CostUSD != 0.9 || rows[0].Counts.Input != 10 {
		t.Errorf("usage by task = %+v, %v; want $0.90 and 10 input under the task held", rows, err)
	}
	b, err := h.Budgets.Get(ctx, nil, hub.BudgetRequest{Agent: "ann"})
	if err != nil || b.State() != hub.BudgetStateWarned {
		t.Errorf("budget after $0.90 of $1.00: %+v, %v; want warned", b, err)
	}
	_, cps, err := h.ListActivity(ctx, "ann", 10)
	if err != nil || len(cps) != 1 || cps[0].CurrentActivity != "tools run (host telemetry): Bash" {
		t.Fatalf("checkpoints = %+v, %v; want the tools line", cps, err)
	}

	st.updates.Store(0)
	if err := svc.Usage.Record(ctx, ann, nil, "tools run (host telemetry): Edit"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Usage.Record(ctx, ann, nil, ""); err != nil {
		t.Fatal(err)
	}
	if n := st.updates.Load(); n != 1 {
		t.Errorf("tools alone, then nothing: %d write transactions, want 1", n)
	}
	if _, cps, err = h.ListActivity(ctx, "ann", 10); err != nil || len(cps) != 2 || cps[0].CurrentActivity != "tools run (host telemetry): Edit" {
		t.Errorf("checkpoints = %+v, %v; want the Edit line newest", cps, err)
	}
}
