package hub

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var dwT0 = time.Date(2025, 1, 19, 14, 0, 0, 0, time.UTC)

func TestNewDeepWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		req     StartDeepWorkRequest
		max     time.Duration
		endsAt  time.Time // zero for flexible
		wantErr string    // substring; "" means success
	}{
		{"flexible", StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "refactor"}, 0, time.Time{}, ""},
		{"strict minutes", StartDeepWorkRequest{Mode: " Strict ", PlannedActivity: "render", PlannedMinutes: 20}, 0, dwT0.Add(20 * time.Minute), ""},
		{"strict max", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", PlannedMinutes: 240}, 0, dwT0.Add(4 * time.Hour), ""},
		{"strict until", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", Until: dwT0.Add(90 * time.Minute)}, 0, dwT0.Add(90 * time.Minute), ""},
		{"strict until at max", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", Until: dwT0.Add(4 * time.Hour)}, 0, dwT0.Add(4 * time.Hour), ""},
		{"custom max", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", PlannedMinutes: 61}, time.Hour, time.Time{}, "at most 60 minutes"},
		{"no mode", StartDeepWorkRequest{PlannedActivity: "x"}, 0, time.Time{}, "mode is required"},
		{"bad mode", StartDeepWorkRequest{Mode: "deep", PlannedActivity: "x"}, 0, time.Time{}, "expected flexible or strict"},
		{"no activity", StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "  "}, 0, time.Time{}, "planned_activity is required"},
		{"long activity", StartDeepWorkRequest{Mode: "flexible", PlannedActivity: strings.Repeat("x", 1025)}, 0, time.Time{}, "1 KiB"},
		{"flexible with minutes", StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "x", PlannedMinutes: 30}, 0, time.Time{}, "flexible deep work lasts until your next activity log"},
		{"flexible with until", StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "x", Until: dwT0.Add(time.Hour)}, 0, time.Time{}, "takes no planned_minutes or until"},
		{"strict without duration", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x"}, 0, time.Time{}, "strict deep work needs planned_minutes (or until)"},
		{"strict both", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", PlannedMinutes: 5, Until: dwT0.Add(time.Hour)}, 0, time.Time{}, "not both"},
		{"strict negative", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", PlannedMinutes: -5}, 0, time.Time{}, "must be greater than 0"},
		{"strict over max", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", PlannedMinutes: 241}, 0, time.Time{}, "at most 240 minutes"},
		{"until now", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", Until: dwT0}, 0, time.Time{}, "not in the future"},
		{"until past", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", Until: dwT0.Add(-time.Minute)}, 0, time.Time{}, "not in the future"},
		{"until over max", StartDeepWorkRequest{Mode: "strict", PlannedActivity: "x", Until: dwT0.Add(4*time.Hour + time.Second)}, 0, time.Time{}, "at most 4h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dw, err := NewDeepWork(tt.req, dwT0, tt.max)
			if tt.wantErr != "" {
				if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.wantErr) {
					t.Fatalf("NewDeepWork = %v, want EINVALID containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewDeepWork = %v", err)
			}
			if dw.State != DeepWorkActive || !dw.StartedAt.Equal(dwT0) || !dw.EndsAt.Equal(tt.endsAt) {
				t.Errorf("NewDeepWork = %+v, want active from %v until %v", dw, dwT0, tt.endsAt)
			}
		})
	}
}

func mustDeepWork(t *testing.T, mode string, minutes int64, at time.Time) DeepWork {
	t.Helper()
	dw, err := NewDeepWork(StartDeepWorkRequest{Mode: mode, PlannedActivity: mode + " work", PlannedMinutes: minutes}, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	return dw
}

func eventKinds(evs []Event) []EventKind {
	ks := make([]EventKind, len(evs))
	for i, e := range evs {
		ks[i] = e.Kind
	}
	return ks
}

func TestStartDeepWork(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(7, dwT0)
	fx := StartDeepWork(&st, mustDeepWork(t, "flexible", 0, dwT0), dwT0, LocaleEN)
	if fx.Started == nil || fx.Replaced != nil || st.ActiveDeepWork == nil || st.ActiveDeepWork.AgentID != 7 {
		t.Fatalf("first start: fx=%+v active=%+v", fx, st.ActiveDeepWork)
	}
	if got := eventKinds(fx.Events); len(got) != 1 || got[0] != EventDeepWorkStarted {
		t.Errorf("events = %v, want [deep_work_started]", got)
	}

	// A second declaration replaces (completes) the first and says so.
	at := dwT0.Add(3 * time.Minute)
	fx = StartDeepWork(&st, mustDeepWork(t, "strict", 20, at), at, LocaleEN)
	if fx.Replaced == nil || fx.Replaced.State != DeepWorkCompleted || fx.Replaced.EndReason != EndedByReplacement || !fx.Replaced.EndedAt.Equal(at) {
		t.Fatalf("replaced = %+v, want completed by replacement at %v", fx.Replaced, at)
	}
	if !strings.Contains(strings.Join(fx.Notes, " "), "replaced by this one") {
		t.Errorf("notes = %q, want the replacement said", fx.Notes)
	}
	if got := eventKinds(fx.Events); len(got) != 2 || got[0] != EventDeepWorkCompleted || got[1] != EventDeepWorkStarted {
		t.Errorf("events = %v, want [deep_work_completed deep_work_started]", got)
	}
	if st.ActiveDeepWork.Mode != DeepWorkStrict || st.ReflectionDue {
		t.Errorf("state after replacement: active=%+v due=%v; want strict, no reflection due", st.ActiveDeepWork, st.ReflectionDue)
	}

	// A strict declaration past its end is expired, not replaced.
	at = at.Add(20 * time.Minute)
	fx = StartDeepWork(&st, mustDeepWork(t, "flexible", 0, at), at, LocaleJA)
	if fx.Expired == nil || fx.Replaced != nil || fx.Expired.State != DeepWorkExpired {
		t.Fatalf("start after strict end: expired=%+v replaced=%+v", fx.Expired, fx.Replaced)
	}
	if st.ExpiredDeepWork != nil {
		t.Errorf("ExpiredDeepWork = %+v, want cleared by the new declaration", st.ExpiredDeepWork)
	}
	if !strings.Contains(fx.Notes[0], "深い作業（flexible）を宣言しました") {
		t.Errorf("ja note = %q", fx.Notes[0])
	}
}

func TestExpireDeepWork(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(1, dwT0)
	StartDeepWork(&st, mustDeepWork(t, "strict", 20, dwT0), dwT0, LocaleEN)
	end := dwT0.Add(20 * time.Minute)
	if exp, evs := ExpireDeepWork(&st, end.Add(-time.Second), LocaleEN); exp != nil || evs != nil {
		t.Fatalf("ExpireDeepWork at 19:59 = %+v, want nothing", exp)
	}
	exp, evs := ExpireDeepWork(&st, end.Add(5*time.Second), LocaleEN)
	if exp == nil || exp.State != DeepWorkExpired || exp.EndReason != EndedByExpiry || !exp.EndedAt.Equal(end) {
		t.Fatalf("ExpireDeepWork at 20:05 = %+v, want expired at its end", exp)
	}
	if len(evs) != 1 || evs[0].Kind != EventDeepWorkExpired {
		t.Errorf("events = %v", evs)
	}
	if st.ActiveDeepWork != nil || st.ExpiredDeepWork == nil || !st.DeepWorkEndedAt.Equal(end) {
		t.Errorf("state = %+v", st)
	}
	if exp, _ := ExpireDeepWork(&st, end.Add(time.Hour), LocaleEN); exp != nil {
		t.Errorf("second ExpireDeepWork = %+v, want nothing (history is never considered again)", exp)
	}

	// Flexible declarations never expire.
	st = NewLivenessState(1, dwT0)
	StartDeepWork(&st, mustDeepWork(t, "flexible", 0, dwT0), dwT0, LocaleEN)
	if exp, _ := ExpireDeepWork(&st, dwT0.Add(100*time.Hour), LocaleEN); exp != nil {
		t.Errorf("flexible expired: %+v", exp)
	}
}

func TestEndDeepWorkByAdmin(t *testing.T) {
	t.Parallel()
	st := NewLivenessState(1, dwT0)
	if _, _, err := EndDeepWorkByAdmin(&st, "a", dwT0, LocaleEN); ErrorCode(err) != EPRECONDITION {
		t.Fatalf("nothing active: err = %v, want EPRECONDITION", err)
	}
	StartDeepWork(&st, mustDeepWork(t, "flexible", 0, dwT0), dwT0, LocaleEN)
	at := dwT0.Add(3 * time.Minute)
	ended, evs, err := EndDeepWorkByAdmin(&st, "a", at, LocaleJA)
	if err != nil || ended.State != DeepWorkCompleted || ended.EndReason != EndedByAdmin || !ended.EndedAt.Equal(at) {
		t.Fatalf("flexible: %+v %v, want completed by admin at %v", ended, err, at)
	}
	if st.ActiveDeepWork != nil || st.ReflectionDue || len(evs) != 1 || evs[0].Kind != EventDeepWorkCompleted || evs[0].Detail != "深い作業（flexible）「flexible work」を管理者が終了" {
		t.Errorf("state %+v events %+v", st, evs)
	}
	// A strict declaration past its end expires as the orchestrator would.
	StartDeepWork(&st, mustDeepWork(t, "strict", 10, at), at, LocaleEN)
	ended, evs, err = EndDeepWorkByAdmin(&st, "a", at.Add(11*time.Minute), LocaleEN)
	if err != nil || ended.State != DeepWorkExpired || !slices.Equal(eventKinds(evs), []EventKind{EventDeepWorkExpired}) {
		t.Errorf("strict past its end: %+v %v %v, want expired", ended, eventKinds(evs), err)
	}
}
