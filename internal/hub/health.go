package hub

import (
	"slices"
	"strings"
	"time"
)

// HealthConfig holds the liveness thresholds (SPEC §3, §4); every one is
// configurable by a hub flag.
type HealthConfig struct {
	InactivityWarning  time.Duration // no log or checkpoint for this long: warning (5m)
	InactivityAnomaly  time.Duration // no log or checkpoint for this long: anomaly (10m)
	ReflectionInterval time.Duration // no reflection log for this long: overdue (30m)
	CheckpointInterval time.Duration // flexible deep work with no log or checkpoint for this long (10m)
	ElapsedInfo        time.Duration // elapsed-time info message from (300s)
	ElapsedWarning     time.Duration // elapsed-time "split the activity" warning from (600s)
	DeepWorkMax        time.Duration // the longest strict deep work (4h)
	IdleAfter          time.Duration // presence idle after no call for this long (2m)
	OfflineAfter       time.Duration // presence offline after no call for this long (15m)
}

// DefaultHealthConfig returns the defaults of SPEC §3 and §4.
func DefaultHealthConfig() HealthConfig {
	return HealthConfig{
		InactivityWarning:  5 * time.Minute,
		InactivityAnomaly:  10 * time.Minute,
		ReflectionInterval: 30 * time.Minute,
		CheckpointInterval: 10 * time.Minute,
		ElapsedInfo:        300 * time.Second,
		ElapsedWarning:     600 * time.Second,
		DeepWorkMax:        DefaultDeepWorkMax,
		IdleAfter:          2 * time.Minute,
		OfflineAfter:       15 * time.Minute,
	}
}

// Validate returns EINVALID when a threshold is not positive or the pairs
// are out of order (warning after anomaly, info after warning, idle after
// offline).
func (c HealthConfig) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"inactivity-warning", c.InactivityWarning},
		{"inactivity-anomaly", c.InactivityAnomaly},
		{"reflection-interval", c.ReflectionInterval},
		{"checkpoint-interval", c.CheckpointInterval},
		{"elapsed-info", c.ElapsedInfo},
		{"elapsed-warning", c.ElapsedWarning},
		{"deep-work-max", c.DeepWorkMax},
		{"idle-after", c.IdleAfter},
		{"offline-after", c.OfflineAfter},
	} {
		if f.d <= 0 {
			return Errorf(EINVALID, "%s is %s: it must be a positive duration such as 5m", f.name, f.d)
		}
	}
	switch {
	case c.InactivityWarning > c.InactivityAnomaly:
		return Errorf(EINVALID, "inactivity-warning (%s) must not be longer than inactivity-anomaly (%s)", c.InactivityWarning, c.InactivityAnomaly)
	case c.ElapsedInfo > c.ElapsedWarning:
		return Errorf(EINVALID, "elapsed-info (%s) must not be longer than elapsed-warning (%s)", c.ElapsedInfo, c.ElapsedWarning)
	case c.IdleAfter > c.OfflineAfter:
		return Errorf(EINVALID, "idle-after (%s) must not be longer than offline-after (%s)", c.IdleAfter, c.OfflineAfter)
	}
	return nil
}

// Elapsed returns the elapsed-time thresholds of c.
func (c HealthConfig) Elapsed() ElapsedThresholds {
	return ElapsedThresholds{Info: c.ElapsedInfo, Warning: c.ElapsedWarning}
}

// HealthState is an agent's overall health.
type HealthState string

// Health states, in rising order of severity.
const (
	HealthHealthy HealthState = "healthy"
	HealthWarning HealthState = "warning"
	HealthAnomaly HealthState = "anomaly"
)

func (s HealthState) rank() int {
	switch s {
	case HealthWarning:
		return 1
	case HealthAnomaly:
		return 2
	}
	return 0
}

// FindingKind names a health check (SPEC §4).
type FindingKind string

// Finding kinds, in the order EvaluateHealth reports them.
const (
	FindingInactivityWarning FindingKind = "inactivity_warning"
	FindingInactivityAnomaly FindingKind = "inactivity_anomaly"
	FindingReflectionOverdue FindingKind = "reflection_overdue"
	FindingCheckpointMissing FindingKind = "checkpoint_missing"
	FindingDeepWorkExpired   FindingKind = "deep_work_expired"
	FindingReflectionSkipped FindingKind = "reflection_skipped"
)

// Finding is one failed health check.
type Finding struct {
	Kind     FindingKind
	Severity HealthState // HealthWarning or HealthAnomaly
	Since    time.Time   // when the check started failing
	Text     string      // for people and the agent, in the evaluation's locale
}

// Health is the result of EvaluateHealth: the worst severity of the
// findings, healthy when there are none.
type Health struct {
	State    HealthState
	Findings []Finding
}

// Kinds returns the kinds of h's findings in order.
func (h Health) Kinds() []FindingKind {
	ks := make([]FindingKind, len(h.Findings))
	for i, f := range h.Findings {
		ks[i] = f.Kind
	}
	return ks
}

// EvaluateHealth applies the checks of SPEC §4 to st at now and returns the
// agent's health together with the next instant at which the result can
// change without new input (zero when it cannot), so a caller can index
// agents by that instant instead of scanning all of them on every tick.
//
//	inactivity warning/anomaly: now − last log or checkpoint ≥ threshold;
//	    suppressed while strict deep work is in force, resumes at its end.
//	reflection overdue (warning): no reflection log for ≥ ReflectionInterval
//	    (since registration when none); suppressed by any deep work in force.
//	checkpoint missing (anomaly): flexible deep work and no log or
//	    checkpoint for ≥ CheckpointInterval since the later of the last one
//	    and the declaration.
//	deep work expired (warning): strict deep work past its end without an
//	    activity log (active past its end, or expired and no log since).
//	reflection skipped (anomaly): a log broke the reflection duty and no
//	    reflection log followed.
//
// EvaluateHealth reads nothing but its arguments.
func EvaluateHealth(st LivenessState, now time.Time, cfg HealthConfig, loc Locale) (Health, time.Time) {
	var next time.Time
	wake := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	h := Health{State: HealthHealthy}
	add := func(kind FindingKind, sev HealthState, since time.Time, text string) {
		h.Findings = append(h.Findings, Finding{Kind: kind, Severity: sev, Since: since, Text: text})
		if sev.rank() > h.State.rank() {
			h.State = sev
		}
	}

	dw := st.ActiveDeepWork
	if !dw.IsActive() {
		dw = nil
	}
	strictInForce := dw != nil && dw.Mode == DeepWorkStrict && dw.InForce(now)
	flexible := dw != nil && dw.Mode == DeepWorkFlexible
	// overrun is the strict declaration whose end has passed with no log since.
	overrun := st.ExpiredDeepWork
	if dw != nil && dw.PastEnd(now) {
		overrun = dw
	}
	var strictEnd time.Time // checks suppressed by strict deep work resume here
	if overrun != nil {
		strictEnd = overrun.EndsAt
	}

	// Inactivity.
	last := st.LastConsciousActivity()
	if strictInForce {
		wake(dw.EndsAt)
	} else {
		warnAt := last.Add(cfg.InactivityWarning)
		anomAt := last.Add(cfg.InactivityAnomaly)
		silence := FormatElapsed(now.Sub(last), loc)
		switch {
		case !now.Before(anomAt):
			add(FindingInactivityAnomaly, HealthAnomaly, later(anomAt, strictEnd), loc.Text(MsgFindingInactivityAnomaly, silence))
		case !now.Before(warnAt):
			add(FindingInactivityWarning, HealthWarning, later(warnAt, strictEnd), loc.Text(MsgFindingInactivityWarning, silence))
			wake(anomAt)
		default:
			wake(warnAt)
		}
	}

	// Reflection overdue.
	switch {
	case strictInForce:
		wake(dw.EndsAt)
	case flexible:
		// Suppressed until the next activity log: only new input changes it.
	default:
		base := st.LastReflectionAt
		if base.IsZero() {
			base = st.CreatedAt
		}
		dueAt := base.Add(cfg.ReflectionInterval)
		if now.Before(dueAt) {
			wake(dueAt)
		} else {
			add(FindingReflectionOverdue, HealthWarning, later(later(dueAt, st.DeepWorkEndedAt), strictEnd),
				loc.Text(MsgFindingReflectionOverdue, FormatElapsed(now.Sub(base), loc)))
		}
	}

	// Checkpoint missing during flexible deep work.
	if flexible {
		base := later(last, dw.StartedAt)
		at := base.Add(cfg.CheckpointInterval)
		if now.Before(at) {
			wake(at)
		} else {
			add(FindingCheckpointMissing, HealthAnomaly, at, loc.Text(MsgFindingCheckpointMissing, FormatElapsed(now.Sub(base), loc)))
		}
	}

	// Strict deep work past its end without an activity log.
	if overrun != nil {
		add(FindingDeepWorkExpired, HealthWarning, overrun.EndsAt,
			loc.Text(MsgFindingDeepWorkExpired, overrun.PlannedActivity, FormatElapsed(now.Sub(overrun.EndsAt), loc)))
	}

	// Reflection skipped after deep work.
	if !st.ReflectionSkippedAt.IsZero() {
		add(FindingReflectionSkipped, HealthAnomaly, st.ReflectionSkippedAt,
			loc.Text(MsgFindingReflectionSkipped, FormatElapsed(now.Sub(st.ReflectionSkippedAt), loc)))
	}
	return h, next
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Presence states.
const (
	PresenceActive  PresenceState = "active"  // made a call recently
	PresenceWaiting PresenceState = "waiting" // parked in WaitForMessages
	PresenceIdle    PresenceState = "idle"    // no call for IdleAfter
	PresenceOffline PresenceState = "offline" // no call for OfflineAfter, or never
)

// LivenessState is everything the health rules need to know about one
// agent, kept up to date by the pure transitions in this package
// (ApplyActivityLog, ApplyCheckpoint, StartDeepWork,
// ExpireDeepWork, RecordHealth). The store persists it and rebuilds it at
// start-up; it never interprets it.
type LivenessState struct {
	AgentID   int64
	CreatedAt time.Time // registration: the baseline while there is no log, checkpoint or reflection yet

	LastActivityLogAt time.Time
	LastCheckpointAt  time.Time
	LastReflectionAt  time.Time // the newest activity log of type reflection

	// ReflectionDue is set by the activity log that completes a deep work:
	// the next log must be a reflection (or carry an urgent_reason).
	ReflectionDue      bool
	ReflectionDueSince time.Time
	// ReflectionSkippedAt is when a log broke the duty; the anomaly holds
	// until the next reflection log. Zero when there is none.
	ReflectionSkippedAt time.Time

	ActiveDeepWork  *DeepWork // the active declaration, nil when none
	ExpiredDeepWork *DeepWork // a strict declaration that expired with no activity log since; nil when none
	DeepWorkEndedAt time.Time // when the last declaration ended (checks resumed)

	HealthState HealthState   // the last recorded health state ("" before the first evaluation)
	HealthKinds []FindingKind // the finding kinds of that evaluation, in rule order
}

// NewLivenessState returns the state of an agent registered at createdAt.
func NewLivenessState(agentID int64, createdAt time.Time) LivenessState {
	return LivenessState{AgentID: agentID, CreatedAt: createdAt, HealthState: HealthHealthy}
}

// LastConsciousActivity returns the newest of the last activity log and the
// last checkpoint (SPEC §4), or CreatedAt when there is neither.
func (st *LivenessState) LastConsciousActivity() time.Time {
	t := st.LastActivityLogAt
	if st.LastCheckpointAt.After(t) {
		t = st.LastCheckpointAt
	}
	if t.IsZero() {
		return st.CreatedAt
	}
	return t
}

// Clone returns a deep copy of st.
func (st LivenessState) Clone() LivenessState {
	if st.ActiveDeepWork != nil {
		dw := *st.ActiveDeepWork
		st.ActiveDeepWork = &dw
	}
	if st.ExpiredDeepWork != nil {
		dw := *st.ExpiredDeepWork
		st.ExpiredDeepWork = &dw
	}
	st.HealthKinds = slices.Clone(st.HealthKinds)
	return st
}

// RecordHealth compares h with the last recorded health of st and, when the
// state or the set of finding kinds changed, records h in st and returns the
// health_changed event (detail in locale loc). It returns nil otherwise.
func RecordHealth(st *LivenessState, h Health, now time.Time, loc Locale) []Event {
	prev := st.HealthState
	if prev == "" {
		prev = HealthHealthy
	}
	kinds := h.Kinds()
	if prev == h.State && slices.Equal(kinds, st.HealthKinds) {
		return nil
	}
	st.HealthState, st.HealthKinds = h.State, kinds
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	list := strings.Join(names, ", ")
	if list == "" {
		list = "-"
	}
	return []Event{newEvent(st.AgentID, EventHealthChanged, now, loc.Text(MsgHealthChanged, prev, h.State, list))}
}
