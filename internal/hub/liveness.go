package hub

import (
	"slices"
	"strings"
	"time"
)

// LivenessState is everything the health rules need to know about one
// agent, kept up to date by the pure transitions in this package
// (ApplyActivityLog, ApplyCheckpoint, StartDeepWork, CompleteDeepWork,
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

// LogEffects says what an activity log did, for the store to persist and the
// response to show.
type LogEffects struct {
	Completed           *DeepWork // the declaration this log completed, now in state completed
	Expired             *DeepWork // a strict declaration found past its end, now expired
	ReflectionDue       bool      // after this log, the next one must be a reflection
	ReflectionFulfilled bool      // this log was the due reflection
	ReflectionWaived    bool      // this log postponed the due reflection with an urgent_reason
	ReflectionSkipped   bool      // this log broke the reflection duty: anomaly
	Events              []Event
	Notes               []string // texts for the agent, in order
}

// ApplyActivityLog applies activity log l, written at now, to the agent's
// state (SPEC §3):
//
//   - a strict declaration already past its end is expired, not completed;
//   - if a reflection is due, a reflection log fulfils it, a log with an
//     urgent_reason postpones it to the next log (waiver event), and any
//     other log breaks it (reflection_skipped anomaly until a reflection);
//   - an active declaration is completed by the log, which is its result, and
//     the next log becomes a due reflection;
//   - the last-activity, last-reflection and expiry marks are updated.
func ApplyActivityLog(st *LivenessState, l ActivityLog, now time.Time, loc Locale) LogEffects {
	var fx LogEffects
	if exp, evs := ExpireDeepWork(st, now, loc); exp != nil {
		fx.Expired = exp
		fx.Events = append(fx.Events, evs...)
		fx.Notes = append(fx.Notes, loc.Text(MsgDeepWorkExpired, exp.PlannedActivity, FormatElapsed(now.Sub(exp.EndsAt), loc)))
	}
	st.ExpiredDeepWork = nil

	isReflection := l.Type == ActivityReflection
	if st.ReflectionDue {
		switch {
		case isReflection:
			st.ReflectionDue, st.ReflectionDueSince = false, time.Time{}
			fx.ReflectionFulfilled = true
			fx.Notes = append(fx.Notes, loc.Text(MsgReflectionFulfilled))
		case l.UrgentReason != "":
			fx.ReflectionWaived = true
			fx.Events = append(fx.Events, newEvent(st.AgentID, EventReflectionWaived, now,
				loc.Text(MsgEventReflectionWaived, l.Type.Label(loc), l.Title, l.UrgentReason)))
			fx.Notes = append(fx.Notes, loc.Text(MsgReflectionWaived, l.UrgentReason))
		default:
			st.ReflectionDue, st.ReflectionDueSince = false, time.Time{}
			st.ReflectionSkippedAt = now
			fx.ReflectionSkipped = true
			fx.Events = append(fx.Events, newEvent(st.AgentID, EventReflectionSkipped, now,
				loc.Text(MsgEventReflectionSkipped, l.Type.Label(loc), l.Title)))
			fx.Notes = append(fx.Notes, loc.Text(MsgReflectionSkipped, l.Type.Label(loc)))
		}
	}
	if isReflection {
		st.LastReflectionAt = now
		st.ReflectionSkippedAt = time.Time{}
	}

	if st.ActiveDeepWork.IsActive() {
		done := endDeepWork(st, now, DeepWorkCompleted, EndedByActivityLog)
		fx.Completed = done
		st.ReflectionDue, st.ReflectionDueSince = true, now
		fx.Events = append(fx.Events, newEvent(st.AgentID, EventDeepWorkCompleted, now,
			loc.Text(MsgEventDeepWorkCompletedByLog, done.PlannedActivity, l.Type.Label(loc), l.Title)))
		fx.Notes = append(fx.Notes, loc.Text(MsgDeepWorkCompleted, done.PlannedActivity))
	}
	fx.ReflectionDue = st.ReflectionDue
	if st.ReflectionDue && !fx.ReflectionWaived {
		fx.Notes = append(fx.Notes, loc.Text(MsgReflectionDue))
	}
	st.LastActivityLogAt = now
	return fx
}

// CheckpointResult is what a checkpoint answers besides the stored row.
type CheckpointResult struct {
	Note string // confirmation naming the heartbeat ID
	// SinceLastLog is the time since the last activity log (since
	// registration when there is none). Its Warning holds the hint to call
	// StartDeepWork, given when no deep work is in force and that time is at
	// least the info threshold; Level is then ElapsedInfo.
	SinceLastLog Elapsed
	DeepWorkHint bool
}

// ApplyCheckpoint records a checkpoint written at now under heartbeatID and
// returns its answer (SPEC §3).
func ApplyCheckpoint(st *LivenessState, heartbeatID string, now time.Time, loc Locale, th ElapsedThresholds) CheckpointResult {
	st.LastCheckpointAt = now
	since := st.LastActivityLogAt
	if since.IsZero() {
		since = st.CreatedAt
	}
	d := now.Sub(since)
	if d < 0 {
		d = 0
	}
	secs := int64(d / time.Second)
	res := CheckpointResult{
		Note:         loc.Text(MsgCheckpointRecorded, heartbeatID),
		SinceLastLog: Elapsed{Seconds: secs, Formatted: FormatElapsed(d, loc), Level: ElapsedNone},
	}
	if !st.ActiveDeepWork.InForce(now) && time.Duration(secs)*time.Second >= th.Info {
		res.DeepWorkHint = true
		res.SinceLastLog.Level = ElapsedInfo
		res.SinceLastLog.Warning = loc.Text(MsgCheckpointDeepWorkHint, res.SinceLastLog.Formatted)
	}
	return res
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
