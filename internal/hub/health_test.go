package hub

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// hs builds a liveness state relative to now: every offset is how long ago.
type hs struct {
	created    time.Duration // registration, default 2h ago
	log        time.Duration // last activity log; 0 = none
	checkpoint time.Duration // last checkpoint; 0 = none
	reflection time.Duration // last reflection log; 0 = none
	skipped    time.Duration // reflection skipped; 0 = none
	deepWork   string        // "", "flexible", "strict", "expired" (strict, marked expired)
	dwStarted  time.Duration // deep work start
	dwMinutes  int64         // strict planned minutes
}

var hNow = time.Date(2025, 1, 19, 15, 0, 0, 0, time.UTC)

func (h hs) state() LivenessState {
	ago := func(d time.Duration) time.Time {
		if d == 0 {
			return time.Time{}
		}
		return hNow.Add(-d)
	}
	created := h.created
	if created == 0 {
		created = 2 * time.Hour
	}
	st := NewLivenessState(1, hNow.Add(-created))
	st.LastActivityLogAt = ago(h.log)
	st.LastCheckpointAt = ago(h.checkpoint)
	st.LastReflectionAt = ago(h.reflection)
	st.ReflectionSkippedAt = ago(h.skipped)
	if h.deepWork != "" {
		start := hNow.Add(-h.dwStarted)
		dw := DeepWork{AgentID: 1, Mode: DeepWorkFlexible, PlannedActivity: "long render", StartedAt: start, State: DeepWorkActive}
		if h.deepWork != "flexible" {
			dw.Mode, dw.EndsAt = DeepWorkStrict, start.Add(time.Duration(h.dwMinutes)*time.Minute)
		}
		st.ActiveDeepWork = &dw
		if h.deepWork == "expired" {
			ExpireDeepWork(&st, hNow, LocaleEN)
		}
	}
	return st
}

func TestEvaluateHealth(t *testing.T) {
	t.Parallel()
	m, s := time.Minute, time.Second
	type want struct {
		state HealthState
		kinds []FindingKind
		since time.Duration // how long ago the first finding began (checked when kinds is not empty)
		next  time.Duration // from now; -1 means none
	}
	tests := []struct {
		name string
		st   hs
		want want
	}{
		// Inactivity: 4:59 / 5:00 / 9:59 / 10:00.
		{"active 4:59", hs{checkpoint: 4*m + 59*s, reflection: m}, want{HealthHealthy, nil, 0, s}},
		{"inactive 5:00", hs{checkpoint: 5 * m, reflection: m}, want{HealthWarning, []FindingKind{FindingInactivityWarning}, 0, 5 * m}},
		{"inactive 9:59", hs{log: 9*m + 59*s, reflection: 9*m + 59*s}, want{HealthWarning, []FindingKind{FindingInactivityWarning}, 4*m + 59*s, s}},
		{"inactive 10:00", hs{log: 10 * m, reflection: 10 * m}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly}, 0, 20 * m}},
		{"checkpoint newer than log", hs{log: 40 * m, checkpoint: 2 * m, reflection: 29 * m}, want{HealthHealthy, nil, 0, m}},
		{"log newer than checkpoint", hs{log: 2 * m, checkpoint: 40 * m, reflection: 2 * m}, want{HealthHealthy, nil, 0, 3 * m}},
		{"never active since registration", hs{created: 6 * m}, want{HealthWarning, []FindingKind{FindingInactivityWarning}, m, 4 * m}},
		{"fresh registration", hs{created: s}, want{HealthHealthy, nil, 0, 5*m - s}},

		// Checkpoints for 40 minutes without logs: fine on inactivity.
		{"checkpointing 40m", hs{log: 40 * m, checkpoint: 3 * m, reflection: 20 * m}, want{HealthHealthy, nil, 0, 2 * m}},

		// Reflection overdue: 29:59 / 30:00, since registration when none.
		{"reflection 29:59", hs{log: m, reflection: 29*m + 59*s}, want{HealthHealthy, nil, 0, s}},
		{"reflection 30:00", hs{log: m, reflection: 30 * m}, want{HealthWarning, []FindingKind{FindingReflectionOverdue}, 0, 4 * m}},
		{"no reflection ever", hs{created: 31 * m, checkpoint: m}, want{HealthWarning, []FindingKind{FindingReflectionOverdue}, m, 4 * m}},

		// Flexible deep work: suppresses reflection only.
		{"flexible suppresses reflection", hs{checkpoint: m, reflection: 2 * time.Hour, deepWork: "flexible", dwStarted: 50 * m}, want{HealthHealthy, nil, 0, 4 * m}},
		{"flexible inactivity 5:00", hs{checkpoint: 5 * m, reflection: 2 * time.Hour, deepWork: "flexible", dwStarted: 50 * m}, want{HealthWarning, []FindingKind{FindingInactivityWarning}, 0, 5 * m}},
		{"flexible checkpoint 9:59", hs{checkpoint: 9*m + 59*s, deepWork: "flexible", dwStarted: 50 * m}, want{HealthWarning, []FindingKind{FindingInactivityWarning}, 4*m + 59*s, s}},
		{"flexible checkpoint 10:00", hs{checkpoint: 10 * m, deepWork: "flexible", dwStarted: 50 * m}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly, FindingCheckpointMissing}, 0, -1}},
		{"flexible counts from its start", hs{checkpoint: 15 * m, deepWork: "flexible", dwStarted: 9*m + 59*s}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly}, 5 * m, s}},

		// Strict deep work: suppresses inactivity and reflection until its end.
		{"strict silent 19:59", hs{checkpoint: 25 * m, reflection: 2 * time.Hour, deepWork: "strict", dwStarted: 19*m + 59*s, dwMinutes: 20}, want{HealthHealthy, nil, 0, s}},
		{"strict at its end", hs{checkpoint: 25 * m, reflection: 25 * m, deepWork: "strict", dwStarted: 20 * m, dwMinutes: 20}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly, FindingDeepWorkExpired}, 0, 5 * m}},
		{"strict overrun", hs{checkpoint: 30 * m, reflection: 2 * time.Hour, deepWork: "strict", dwStarted: 25 * m, dwMinutes: 20}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly, FindingReflectionOverdue, FindingDeepWorkExpired}, 5 * m, -1}},
		{"strict expired", hs{checkpoint: 30 * m, reflection: 10 * m, deepWork: "expired", dwStarted: 25 * m, dwMinutes: 20}, want{HealthAnomaly, []FindingKind{FindingInactivityAnomaly, FindingDeepWorkExpired}, 5 * m, 20 * m}},
		{"strict expired, late inactivity", hs{checkpoint: 4 * m, reflection: 10 * m, deepWork: "expired", dwStarted: 25 * m, dwMinutes: 20}, want{HealthWarning, []FindingKind{FindingDeepWorkExpired}, 5 * m, m}},

		// Reflection skipped: anomaly whatever else.
		{"reflection skipped", hs{log: m, reflection: 20 * m, skipped: m}, want{HealthAnomaly, []FindingKind{FindingReflectionSkipped}, m, 4 * m}},
		{"skipped during strict", hs{log: m, skipped: m, deepWork: "strict", dwStarted: m, dwMinutes: 60}, want{HealthAnomaly, []FindingKind{FindingReflectionSkipped}, m, 59 * m}},
	}
	cfg := DefaultHealthConfig()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, next := EvaluateHealth(tt.st.state(), hNow, cfg, LocaleEN)
			if h.State != tt.want.state {
				t.Errorf("State = %q, want %q (findings %+v)", h.State, tt.want.state, h.Findings)
			}
			if got := h.Kinds(); !slices.Equal(got, tt.want.kinds) && !(len(got) == 0 && len(tt.want.kinds) == 0) {
				t.Errorf("kinds = %v, want %v", got, tt.want.kinds)
			}
			if len(h.Findings) > 0 {
				if got, want := h.Findings[0].Since, hNow.Add(-tt.want.since); !got.Equal(want) {
					t.Errorf("Since = %v, want %v", got, want)
				}
				for _, f := range h.Findings {
					if f.Text == "" || strings.Contains(f.Text, "%!") {
						t.Errorf("finding %s text = %q", f.Kind, f.Text)
					}
				}
			}
			var wantNext time.Time
			if tt.want.next >= 0 {
				wantNext = hNow.Add(tt.want.next)
			}
			if !next.Equal(wantNext) {
				t.Errorf("next = %v, want %v", next, wantNext)
			}
		})
	}
}

func TestEvaluateHealthTexts(t *testing.T) {
	t.Parallel()
	st := hs{checkpoint: 12*time.Minute + 3*time.Second, reflection: 5 * time.Minute}.state()
	h, _ := EvaluateHealth(st, hNow, DefaultHealthConfig(), LocaleJA)
	if len(h.Findings) != 1 || h.Findings[0].Text != "無活動異常: 活動ログまたはチェックポイントが12分3秒作成されていません。ループにハマっているか異常停止している可能性があります。" {
		t.Errorf("ja findings = %+v", h.Findings)
	}
	h, _ = EvaluateHealth(st, hNow, DefaultHealthConfig(), LocaleEN)
	if h.Findings[0].Text != "No activity log or checkpoint for 12m3s: the agent may be stuck in a loop or stopped." {
		t.Errorf("en findings = %+v", h.Findings)
	}
}

func TestEvaluateHealthCustomThresholds(t *testing.T) {
	t.Parallel()
	cfg := DefaultHealthConfig()
	cfg.InactivityWarning, cfg.InactivityAnomaly, cfg.ReflectionInterval = time.Minute, 2*time.Minute, time.Hour
	h, next := EvaluateHealth(hs{log: 90 * time.Second, reflection: 50 * time.Minute}.state(), hNow, cfg, LocaleEN)
	if h.State != HealthWarning || !next.Equal(hNow.Add(30*time.Second)) {
		t.Errorf("custom thresholds: %+v next %v", h, next)
	}
}

// TestEvaluateHealthNextIsExact checks the promise behind the returned
// instant on random states: the result does not change before it (so an
// orchestrator may skip the agent until then), and with no instant it never
// changes.
func TestEvaluateHealthNextIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := DefaultHealthConfig()
	pick := func(max time.Duration) time.Duration {
		if rng.IntN(4) == 0 {
			return 0
		}
		return time.Duration(rng.Int64N(int64(max/time.Second))+1) * time.Second
	}
	modes := []string{"", "flexible", "strict", "expired"}
	for i := range 2000 {
		h := hs{created: 3 * time.Hour, log: pick(time.Hour), checkpoint: pick(time.Hour), reflection: pick(2 * time.Hour),
			skipped: pick(time.Hour) * time.Duration(rng.IntN(2)), deepWork: modes[rng.IntN(len(modes))],
			dwStarted: pick(time.Hour) + time.Second, dwMinutes: rng.Int64N(90) + 1}
		st := h.state()
		got, next := EvaluateHealth(st, hNow, cfg, LocaleEN)
		end := next
		if end.IsZero() {
			end = hNow.Add(48 * time.Hour)
		}
		for _, at := range []time.Time{hNow.Add(time.Second), hNow.Add(end.Sub(hNow) / 2), end.Add(-time.Second)} {
			if !at.After(hNow) || !at.Before(end) {
				continue
			}
			later, _ := EvaluateHealth(st, at, cfg, LocaleEN)
			if later.State != got.State || !slices.Equal(later.Kinds(), got.Kinds()) {
				t.Fatalf("case %d %+v: at now %s %v, at %v (before next %v) %s %v", i, h, got.State, got.Kinds(), at.Sub(hNow), next.Sub(hNow), later.State, later.Kinds())
			}
		}
		if !next.IsZero() && !next.After(hNow) {
			t.Fatalf("case %d: next %v is not after now", i, next)
		}
	}
}

func TestHealthConfigValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultHealthConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for name, edit := range map[string]func(*HealthConfig){
		"zero":     func(c *HealthConfig) { c.ReflectionInterval = 0 },
		"negative": func(c *HealthConfig) { c.CheckpointInterval = -time.Minute },
		"order":    func(c *HealthConfig) { c.InactivityWarning = 20 * time.Minute },
		"elapsed":  func(c *HealthConfig) { c.ElapsedInfo = time.Hour },
		"presence": func(c *HealthConfig) { c.IdleAfter = time.Hour },
	} {
		c := DefaultHealthConfig()
		edit(&c)
		if err := c.Validate(); ErrorCode(err) != EINVALID {
			t.Errorf("%s: Validate = %v, want EINVALID", name, err)
		}
	}
}

func TestDecidePresence(t *testing.T) {
	t.Parallel()
	cfg := DefaultHealthConfig()
	m, s := time.Minute, time.Second
	tests := []struct {
		since  time.Duration // -1: never called
		parked int
		want   PresenceState
	}{
		{-1, 0, PresenceOffline},
		{-1, 1, PresenceWaiting},
		{time.Hour, 2, PresenceWaiting},
		{0, 0, PresenceActive},
		{m + 59*s, 0, PresenceActive},
		{2 * m, 0, PresenceIdle},
		{14*m + 59*s, 0, PresenceIdle},
		{15 * m, 0, PresenceOffline},
	}
	for _, tt := range tests {
		var last time.Time
		if tt.since >= 0 {
			last = hNow.Add(-tt.since)
		}
		if got := DecidePresence(last, tt.parked, hNow, cfg); got != tt.want {
			t.Errorf("DecidePresence(%v ago, %d parked) = %q, want %q", tt.since, tt.parked, got, tt.want)
		}
	}
}

func BenchmarkEvaluateHealth(b *testing.B) {
	st := hs{checkpoint: 3 * time.Minute, reflection: 10 * time.Minute}.state()
	cfg := DefaultHealthConfig()
	for b.Loop() {
		EvaluateHealth(st, hNow, cfg, LocaleEN)
	}
}
