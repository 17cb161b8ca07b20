package hub

import (
	"strings"
	"testing"
	"time"
)

func logOf(typ ActivityType, urgent string) ActivityLog {
	return ActivityLog{Type: typ, Title: string(typ) + " log", UrgentReason: urgent}
}

func TestApplyActivityLogWithoutDeepWork(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(1, dwT0)
	at := dwT0.Add(time.Minute)
	fx := ApplyActivityLog(&st, logOf(ActivityThinking, ""), at, LocaleEN)
	if fx.Completed != nil || fx.ReflectionDue || fx.ReflectionSkipped || len(fx.Events) != 0 || len(fx.Notes) != 0 {
		t.Errorf("plain log effects = %+v, want none", fx)
	}
	if !st.LastActivityLogAt.Equal(at) || !st.LastReflectionAt.IsZero() {
		t.Errorf("state = %+v", st)
	}
	at = at.Add(time.Minute)
	ApplyActivityLog(&st, logOf(ActivityReflection, "ignored without a duty"), at, LocaleEN)
	if !st.LastReflectionAt.Equal(at) {
		t.Errorf("LastReflectionAt = %v, want %v", st.LastReflectionAt, at)
	}
}

// TestReflectionDuty walks every transition of the reflection duty after
// deep work: each case starts a deep work, completes it with a log, then
// applies the listed follow-up logs.
func TestReflectionDuty(t *testing.T) {
	t.Parallel()
	type step struct {
		log       ActivityLog
		due       bool // ReflectionDue after the log
		fulfilled bool
		waived    bool
		skipped   bool
		events    []EventKind
		note      string // substring of the joined notes
	}
	tests := []struct {
		name  string
		mode  string
		steps []step
	}{
		{"reflection right after", "flexible", []step{
			{log: logOf(ActivityReflection, ""), fulfilled: true, note: "fulfilled"},
			{log: logOf(ActivityCreation, "")},
		}},
		{"skipped", "strict", []step{
			{log: logOf(ActivityCreation, ""), skipped: true, events: []EventKind{EventReflectionSkipped}, note: "Reflection skipped"},
			{log: logOf(ActivityThinking, "")}, // the duty was one log only
		}},
		{"waived then reflection", "flexible", []step{
			{log: logOf(ActivityObservation, "production is down"), due: true, waived: true, events: []EventKind{EventReflectionWaived}, note: "production is down"},
			{log: logOf(ActivityReflection, ""), fulfilled: true},
		}},
		{"waived then skipped", "flexible", []step{
			{log: logOf(ActivityObservation, "fire"), due: true, waived: true, events: []EventKind{EventReflectionWaived}},
			{log: logOf(ActivityCreation, ""), skipped: true, events: []EventKind{EventReflectionSkipped}},
		}},
		{"waived twice", "strict", []step{
			{log: logOf(ActivityOther, "fire"), due: true, waived: true, events: []EventKind{EventReflectionWaived}},
			{log: logOf(ActivityOther, "still fire"), due: true, waived: true, events: []EventKind{EventReflectionWaived}},
			{log: logOf(ActivityReflection, ""), fulfilled: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := NewLivenessState(1, dwT0)
			StartDeepWork(&st, mustDeepWork(t, tt.mode, 30*int64(btoi(tt.mode == "strict")), dwT0), dwT0, LocaleEN)
			at := dwT0.Add(10 * time.Minute)
			fx := ApplyActivityLog(&st, logOf(ActivityCreation, ""), at, LocaleEN)
			if fx.Completed == nil || fx.Completed.State != DeepWorkCompleted || fx.Completed.EndReason != EndedByActivityLog || !fx.ReflectionDue {
				t.Fatalf("completing log: %+v", fx)
			}
			if got := eventKinds(fx.Events); len(got) != 1 || got[0] != EventDeepWorkCompleted {
				t.Errorf("completing events = %v", got)
			}
			if notes := strings.Join(fx.Notes, " "); !strings.Contains(notes, "is completed by this activity log") || !strings.Contains(notes, "Reflection is now due") {
				t.Errorf("completing notes = %q", notes)
			}
			for i, s := range tt.steps {
				at = at.Add(time.Minute)
				fx := ApplyActivityLog(&st, s.log, at, LocaleEN)
				if fx.ReflectionDue != s.due || st.ReflectionDue != s.due || fx.ReflectionFulfilled != s.fulfilled || fx.ReflectionWaived != s.waived || fx.ReflectionSkipped != s.skipped {
					t.Errorf("step %d (%s): effects %+v, want due=%v fulfilled=%v waived=%v skipped=%v", i, s.log.Type, fx, s.due, s.fulfilled, s.waived, s.skipped)
				}
				if got := eventKinds(fx.Events); len(got) != len(s.events) || (len(got) > 0 && got[0] != s.events[0]) {
					t.Errorf("step %d: events %v, want %v", i, got, s.events)
				}
				if s.note != "" && !strings.Contains(strings.Join(fx.Notes, " "), s.note) {
					t.Errorf("step %d: notes %q, want %q", i, fx.Notes, s.note)
				}
				if s.skipped && !st.ReflectionSkippedAt.Equal(at) {
					t.Errorf("step %d: ReflectionSkippedAt = %v, want %v", i, st.ReflectionSkippedAt, at)
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReflectionClearsSkipped(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(1, dwT0)
	st.ReflectionSkippedAt = dwT0
	ApplyActivityLog(&st, logOf(ActivityThinking, ""), dwT0.Add(time.Minute), LocaleEN)
	if st.ReflectionSkippedAt.IsZero() {
		t.Fatal("a non-reflection log cleared reflection_skipped")
	}
	ApplyActivityLog(&st, logOf(ActivityReflection, ""), dwT0.Add(2*time.Minute), LocaleEN)
	if !st.ReflectionSkippedAt.IsZero() {
		t.Error("a reflection log did not clear reflection_skipped")
	}
}

func TestActivityLogAfterStrictEnd(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(1, dwT0)
	StartDeepWork(&st, mustDeepWork(t, "strict", 20, dwT0), dwT0, LocaleEN)
	// Before the end: the log completes it and reflection becomes due.
	st2 := st.Clone()
	fx := ApplyActivityLog(&st2, logOf(ActivityCreation, ""), dwT0.Add(20*time.Minute-time.Second), LocaleEN)
	if fx.Completed == nil || !fx.ReflectionDue {
		t.Errorf("log at 19:59: %+v, want completed and reflection due", fx)
	}
	// At or after the end (orchestrator not yet run): expired, no duty, and
	// the expiry mark is cleared by the log.
	fx = ApplyActivityLog(&st, logOf(ActivityCreation, ""), dwT0.Add(20*time.Minute), LocaleEN)
	if fx.Expired == nil || fx.Completed != nil || fx.ReflectionDue || st.ExpiredDeepWork != nil {
		t.Errorf("log at 20:00: %+v, state %+v; want expired, no duty", fx, st)
	}
	if got := eventKinds(fx.Events); len(got) != 1 || got[0] != EventDeepWorkExpired {
		t.Errorf("events = %v", got)
	}
}

func TestApplyCheckpoint(t *testing.T) {
	t.Parallel()
	th := DefaultHealthConfig().Elapsed()
	tests := []struct {
		name     string
		sinceLog time.Duration
		deepWork string // "", "flexible", "strict", "strict-over"
		hint     bool
	}{
		{"299s", 299 * time.Second, "", false},
		{"300s", 300 * time.Second, "", true},
		{"40m", 40 * time.Minute, "", true},
		{"flexible", 40 * time.Minute, "flexible", false},
		{"strict", 15 * time.Minute, "strict", false},
		{"strict over", 25 * time.Minute, "strict-over", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := NewLivenessState(1, dwT0.Add(-time.Hour))
			st.LastActivityLogAt = dwT0
			now := dwT0.Add(tt.sinceLog)
			switch tt.deepWork {
			case "flexible":
				StartDeepWork(&st, mustDeepWork(t, "flexible", 0, dwT0), dwT0, LocaleEN)
			case "strict", "strict-over":
				StartDeepWork(&st, mustDeepWork(t, "strict", 20, dwT0), dwT0, LocaleEN)
			}
			res := ApplyCheckpoint(&st, "20250119140000", now, LocaleEN, th)
			if !st.LastCheckpointAt.Equal(now) {
				t.Errorf("LastCheckpointAt = %v, want %v", st.LastCheckpointAt, now)
			}
			if res.DeepWorkHint != tt.hint || (res.SinceLastLog.Warning != "") != tt.hint {
				t.Errorf("hint = %v (%q), want %v", res.DeepWorkHint, res.SinceLastLog.Warning, tt.hint)
			}
			if tt.hint && !strings.Contains(res.SinceLastLog.Warning, "StartDeepWork") {
				t.Errorf("hint text = %q", res.SinceLastLog.Warning)
			}
			if got, want := res.SinceLastLog.Seconds, int64(tt.sinceLog/time.Second); got != want {
				t.Errorf("Seconds = %d, want %d", got, want)
			}
			if !strings.Contains(res.Note, "20250119140000") {
				t.Errorf("Note = %q", res.Note)
			}
		})
	}
	// Without any activity log the time counts from registration.
	st := NewLivenessState(1, dwT0)
	res := ApplyCheckpoint(&st, "20250119140000", dwT0.Add(6*time.Minute), LocaleJA, th)
	if res.SinceLastLog.Formatted != "6分" || !strings.Contains(res.SinceLastLog.Warning, "start_deep_work") {
		t.Errorf("ja checkpoint = %+v", res)
	}
}

func TestRecordHealth(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(3, dwT0)
	healthy := Health{State: HealthHealthy}
	if evs := RecordHealth(&st, healthy, dwT0, LocaleEN); evs != nil {
		t.Errorf("healthy → healthy recorded %v", evs)
	}
	warn := Health{State: HealthWarning, Findings: []Finding{{Kind: FindingInactivityWarning, Severity: HealthWarning}}}
	evs := RecordHealth(&st, warn, dwT0, LocaleEN)
	if len(evs) != 1 || evs[0].Kind != EventHealthChanged || evs[0].AgentID != 3 || evs[0].Detail != "health healthy → warning (inactivity_warning)" {
		t.Errorf("healthy → warning = %+v", evs)
	}
	if evs := RecordHealth(&st, warn, dwT0.Add(time.Minute), LocaleEN); evs != nil {
		t.Errorf("same health recorded again: %v", evs)
	}
	warn2 := Health{State: HealthWarning, Findings: []Finding{warn.Findings[0], {Kind: FindingReflectionOverdue, Severity: HealthWarning}}}
	if evs := RecordHealth(&st, warn2, dwT0, LocaleEN); len(evs) != 1 {
		t.Errorf("new finding with the same state = %v, want one event", evs)
	}
	evs = RecordHealth(&st, healthy, dwT0, LocaleJA)
	if len(evs) != 1 || evs[0].Detail != "健全性 warning → healthy（-）" {
		t.Errorf("warning → healthy = %+v", evs)
	}
}
