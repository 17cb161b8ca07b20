package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

var cronT0 = time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)

func everyJob(every int64, anchor time.Time) hub.CronJob {
	return hub.CronJob{Name: "tick", Kind: hub.CronEvery, EverySeconds: every, Anchor: anchor, Target: "claude", Message: "ping", Enabled: true}
}

func TestParseCronExpr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr    string
		wantErr string
	}{
		{"0 9 * * 1-5", ""},
		{"*/15 * * * *", ""},
		{"@daily", ""},
		{"", "empty"},
		{"0 9 * *", "4 fields"},
		{"0 0 9 * * *", "6 fields"},
		{"61 * * * *", "above maximum"},
		{"0 9 * * mon-xyz", "xyz"},
		{"@every 1h", "every"},
		{"TZ=UTC 0 9 * * *", "time zone"},
		{"CRON_TZ=Asia/Tokyo", "time zone"},
		{"@sometimes", "unrecognized descriptor"},
	}
	for _, tt := range tests {
		_, err := hub.ParseCronExpr(tt.expr)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("ParseCronExpr(%q): %v", tt.expr, err)
			}
			continue
		}
		if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), tt.wantErr) {
			t.Errorf("ParseCronExpr(%q) = %v, want EINVALID containing %q", tt.expr, err, tt.wantErr)
		}
	}
}

func TestPrepareCronJob(t *testing.T) {
	t.Parallel()
	base := hub.CronJob{Name: "daily-check", Target: "claude", Message: "Generate a daily summary.", Enabled: true}
	tests := []struct {
		name       string
		mod        func(*hub.CronJob)
		wantErr    string
		wantNext   time.Time
		wantNotice string
	}{
		{"cron", func(j *hub.CronJob) { j.Kind, j.Expr = hub.CronCron, "0 9 * * *" }, "", time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC), ""},
		{"every anchored at now", func(j *hub.CronJob) { j.Kind, j.EverySeconds = hub.CronEvery, 60 }, "", cronT0.Add(time.Minute), ""},
		{"at future", func(j *hub.CronJob) { j.Kind, j.At = hub.CronAt, cronT0.Add(time.Hour) }, "", cronT0.Add(time.Hour), ""},
		{"at past", func(j *hub.CronJob) { j.Kind, j.At = hub.CronAt, cronT0.Add(-time.Hour) }, "", time.Time{}, "will never run"},
		{"at now", func(j *hub.CronJob) { j.Kind, j.At = hub.CronAt, cronT0 }, "", time.Time{}, "will never run"},
		{"disabled", func(j *hub.CronJob) { j.Kind, j.Expr, j.Enabled = hub.CronCron, "0 9 * * *", false }, "", time.Time{}, ""},
		{"channel target", func(j *hub.CronJob) { j.Kind, j.Expr, j.Target = hub.CronCron, "@hourly", "#ops" }, "", cronT0.Add(time.Hour), ""},
		{"bad expr", func(j *hub.CronJob) { j.Kind, j.Expr = hub.CronCron, "0 25 * * *" }, "above maximum", time.Time{}, ""},
		{"no kind", func(j *hub.CronJob) {}, "missing schedule", time.Time{}, ""},
		{"bad kind", func(j *hub.CronJob) { j.Kind = "sometimes" }, "unknown", time.Time{}, ""},
		{"every zero", func(j *hub.CronJob) { j.Kind = hub.CronEvery }, "period", time.Time{}, ""},
		{"at zero", func(j *hub.CronJob) { j.Kind = hub.CronAt }, "needs a time", time.Time{}, ""},
		{"bad name", func(j *hub.CronJob) { j.Kind, j.At, j.Name = hub.CronAt, cronT0, "daily check" }, "name", time.Time{}, ""},
		{"bad target", func(j *hub.CronJob) { j.Kind, j.At, j.Target = hub.CronAt, cronT0, "Claude!" }, "target", time.Time{}, ""},
		{"bad channel", func(j *hub.CronJob) { j.Kind, j.At, j.Target = hub.CronAt, cronT0, "#" }, "channel", time.Time{}, ""},
		{"empty message", func(j *hub.CronJob) { j.Kind, j.At, j.Message = hub.CronAt, cronT0, "  " }, "message is empty", time.Time{}, ""},
	}
	for _, tt := range tests {
		j := base
		tt.mod(&j)
		got, notice, err := hub.PrepareCronJob(j, cronT0, time.UTC)
		if tt.wantErr != "" {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), tt.wantErr) {
				t.Errorf("%s: err = %v, want EINVALID containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !got.NextRunAt.Equal(tt.wantNext) {
			t.Errorf("%s: NextRunAt = %v, want %v", tt.name, got.NextRunAt, tt.wantNext)
		}
		if (tt.wantNotice == "") != (notice == "") || !strings.Contains(notice, tt.wantNotice) {
			t.Errorf("%s: notice = %q, want %q", tt.name, notice, tt.wantNotice)
		}
		if !got.CreatedAt.Equal(cronT0) {
			t.Errorf("%s: CreatedAt = %v", tt.name, got.CreatedAt)
		}
	}
}

func TestNextRun(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	anchor := time.Date(2026, 1, 1, 0, 0, 7, 0, time.UTC)
	cronJob := func(expr string) hub.CronJob { return hub.CronJob{Kind: hub.CronCron, Expr: expr} }
	tests := []struct {
		name   string
		job    hub.CronJob
		after  time.Time
		loc    *time.Location
		want   time.Time
		wantOK bool
	}{
		{"at ahead", hub.CronJob{Kind: hub.CronAt, At: cronT0.Add(time.Minute)}, cronT0, nil, cronT0.Add(time.Minute), true},
		{"at reached", hub.CronJob{Kind: hub.CronAt, At: cronT0}, cronT0, nil, time.Time{}, false},
		{"at past", hub.CronJob{Kind: hub.CronAt, At: cronT0.Add(-time.Second)}, cronT0, nil, time.Time{}, false},
		{"every before anchor", everyJob(60, anchor), anchor.Add(-time.Hour), nil, anchor, true},
		{"every at anchor", everyJob(60, anchor), anchor, nil, anchor.Add(time.Minute), true},
		{"every mid slot", everyJob(60, anchor), anchor.Add(90 * time.Second), nil, anchor.Add(2 * time.Minute), true},
		{"every on slot", everyJob(60, anchor), anchor.Add(2 * time.Minute), nil, anchor.Add(3 * time.Minute), true},
		{"every keeps anchor seconds", everyJob(3600, anchor), cronT0, nil, time.Date(2026, 2, 19, 10, 0, 7, 0, time.UTC), true},
		{"every 1s", everyJob(1, anchor), cronT0.Add(300 * time.Millisecond), nil, cronT0.Add(time.Second), true},
		{"cron utc", cronJob("0 9 * * *"), cronT0, time.UTC, time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC), true},
		{"cron in hub zone", cronJob("0 9 * * *"), cronT0, tokyo, time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC), true},
		{"cron weekdays", cronJob("30 8 * * 1-5"), time.Date(2026, 2, 20, 9, 0, 0, 0, time.UTC), time.UTC, time.Date(2026, 2, 23, 8, 30, 0, 0, time.UTC), true}, // Fri → Mon
		{"cron strictly after", cronJob("*/15 * * * *"), cronT0, time.UTC, cronT0.Add(15 * time.Minute), true},
		{"cron impossible", cronJob("0 0 30 2 *"), cronT0, time.UTC, time.Time{}, false},
		{"cron bad", cronJob("nope"), cronT0, time.UTC, time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := hub.NextRun(tt.job, tt.after, tt.loc)
		if ok != tt.wantOK || !got.Equal(tt.want) {
			t.Errorf("%s: NextRun = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestCronEveryAnchorAlignment runs an every job on a jittery 5 s ticker:
// the fire times stay on the anchor's grid.
func TestCronEveryAnchorAlignment(t *testing.T) {
	t.Parallel()
	anchor := cronT0.Add(3 * time.Second)
	job, _, err := hub.PrepareCronJob(everyJob(20, anchor), cronT0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var fired []time.Time
	now := cronT0
	for i := 0; i < 60; i++ {
		now = now.Add(5*time.Second + time.Duration(i%4)*100*time.Millisecond)
		if hub.CronDue(job, now) {
			fired = append(fired, job.NextRunAt)
			job, _ = hub.ApplyCronRun(job, hub.CronRun{ScheduledAt: job.NextRunAt, RanAt: now, Status: hub.CronRunOK}, time.UTC)
		}
	}
	if len(fired) < 10 {
		t.Fatalf("fired %d times in %v, want ≥ 10", len(fired), now.Sub(cronT0))
	}
	for i, f := range fired {
		if want := anchor.Add(time.Duration(i) * 20 * time.Second); !f.Equal(want) {
			t.Errorf("fire %d scheduled at %v, want %v", i, f, want)
		}
	}
}

func TestCronErrorPolicy(t *testing.T) {
	t.Parallel()
	job, _, err := hub.PrepareCronJob(everyJob(60, cronT0), cronT0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	run := func(status string) bool {
		t.Helper()
		now := job.NextRunAt
		var disabled bool
		job, disabled = hub.ApplyCronRun(job, hub.CronRun{ScheduledAt: now, RanAt: now, Status: status}, time.UTC)
		return disabled
	}
	for i := 1; i <= 4; i++ {
		if run(hub.CronRunError) {
			t.Fatalf("disabled after %d errors", i)
		}
	}
	if !job.Enabled || job.ConsecutiveErrors != 4 {
		t.Fatalf("after 4 errors: enabled=%v errors=%d", job.Enabled, job.ConsecutiveErrors)
	}
	if run(hub.CronRunOK); job.ConsecutiveErrors != 0 {
		t.Fatalf("success left %d errors, want 0", job.ConsecutiveErrors)
	}
	for i := 1; i <= 4; i++ {
		run(hub.CronRunError)
	}
	next := job.NextRunAt
	if !run(hub.CronRunError) {
		t.Fatalf("5th consecutive error did not disable the job")
	}
	if job.Enabled || job.ConsecutiveErrors != 5 || !job.NextRunAt.IsZero() {
		t.Errorf("after 5 errors: enabled=%v errors=%d next=%v", job.Enabled, job.ConsecutiveErrors, job.NextRunAt)
	}
	if hub.CronDue(job, next.Add(time.Hour)) {
		t.Errorf("a disabled job is due")
	}
	// Enabling again resets the count and schedules from now, not the past.
	later := next.Add(time.Hour + 30*time.Second)
	job = hub.EnableCronJob(job, later, time.UTC)
	if !job.Enabled || job.ConsecutiveErrors != 0 || !job.NextRunAt.After(later) || job.NextRunAt.Sub(later) > time.Minute {
		t.Errorf("re-enabled: enabled=%v errors=%d next=%v (now %v)", job.Enabled, job.ConsecutiveErrors, job.NextRunAt, later)
	}
	job = hub.DisableCronJob(job, later)
	if job.Enabled || !job.NextRunAt.IsZero() {
		t.Errorf("disabled: enabled=%v next=%v", job.Enabled, job.NextRunAt)
	}
}

// TestCronMissedRuns: a job whose slots passed while the hub was down fires
// once on start, then resumes on its grid.
func TestCronMissedRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		job      hub.CronJob
		down     time.Duration // how long after NextRunAt the hub comes back
		wantNext time.Time     // after the catch-up run; zero for none
	}{
		{"every", everyJob(60, cronT0), 10*time.Minute + 30*time.Second, cronT0.Add(12 * time.Minute)},
		{"cron", hub.CronJob{Name: "c", Kind: hub.CronCron, Expr: "0 * * * *", Target: "claude", Message: "m", Enabled: true}, 5*time.Hour + time.Minute, cronT0.Add(7 * time.Hour)},
		{"at", hub.CronJob{Name: "a", Kind: hub.CronAt, At: cronT0.Add(time.Hour), Target: "claude", Message: "m", Enabled: true}, 3 * time.Hour, time.Time{}},
	}
	for _, tt := range tests {
		job, _, err := hub.PrepareCronJob(tt.job, cronT0, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		start := job.NextRunAt.Add(tt.down) // restart: the hub was down since before NextRunAt
		if !hub.CronDue(job, start) {
			t.Fatalf("%s: not due at start", tt.name)
		}
		runs := 0
		for now := start; now.Before(start.Add(10 * time.Second)); now = now.Add(5 * time.Second) {
			if hub.CronDue(job, now) {
				runs++
				job, _ = hub.ApplyCronRun(job, hub.CronRun{ScheduledAt: job.NextRunAt, RanAt: now, Status: hub.CronRunOK}, time.UTC)
			}
		}
		if runs != 1 {
			t.Errorf("%s: %d runs at start, want 1", tt.name, runs)
		}
		if !job.NextRunAt.Equal(tt.wantNext) {
			t.Errorf("%s: next run %v, want %v", tt.name, job.NextRunAt, tt.wantNext)
		}
	}
}

func TestCronManualRunKeepsAt(t *testing.T) {
	t.Parallel()
	at := cronT0.Add(time.Hour)
	job, _, err := hub.PrepareCronJob(hub.CronJob{Name: "a", Kind: hub.CronAt, At: at, Target: "#ops", Message: "m", Enabled: true}, cronT0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	job, _ = hub.ApplyCronRun(job, hub.CronRun{ScheduledAt: cronT0, RanAt: cronT0, Status: hub.CronRunOK, Manual: true}, time.UTC)
	if !job.NextRunAt.Equal(at) {
		t.Errorf("after a manual run: next %v, want %v", job.NextRunAt, at)
	}
	job, _ = hub.ApplyCronRun(job, hub.CronRun{ScheduledAt: at, RanAt: at, Status: hub.CronRunOK}, time.UTC)
	if !job.NextRunAt.IsZero() {
		t.Errorf("after its run: next %v, want none", job.NextRunAt)
	}
	if job = hub.EnableCronJob(job, at.Add(time.Minute), time.UTC); !job.NextRunAt.IsZero() {
		t.Errorf("re-enabled after its run: next %v, want none", job.NextRunAt)
	}
}

// A job given without a kind takes the kind of its one schedule field.
func TestPrepareCronJobInfersKind(t *testing.T) {
	t.Parallel()
	base := hub.CronJob{Name: "j", Target: "claude", Message: "m", Enabled: true}
	at, every, expr := base, base, base
	at.At = cronT0.Add(time.Hour)
	every.EverySeconds = 60
	expr.Expr = "0 9 * * *"
	for _, tt := range []struct {
		job  hub.CronJob
		want string
	}{{at, hub.CronAt}, {every, hub.CronEvery}, {expr, hub.CronCron}} {
		job, _, err := hub.PrepareCronJob(tt.job, cronT0, time.UTC)
		if err != nil || job.Kind != tt.want {
			t.Errorf("PrepareCronJob(%+v) kind = %q, %v; want %q", tt.job, job.Kind, err, tt.want)
		}
	}
	two := every
	two.Expr = "0 9 * * *"
	_, _, err := hub.PrepareCronJob(two, cronT0, time.UTC)
	if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), "gives 2 schedules") {
		t.Errorf("two schedules: err = %v, want EINVALID naming them", err)
	}
	if _, _, err := hub.PrepareCronJob(base, cronT0, time.UTC); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("no schedule: err = %v, want EINVALID", err)
	}
}
