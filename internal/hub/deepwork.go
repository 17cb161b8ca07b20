package hub

import (
	"strings"
	"time"
	"unicode/utf8"
)

// DeepWorkMode says what a deep work declaration suppresses (SPEC §3).
type DeepWorkMode string

// Deep work modes.
const (
	// DeepWorkFlexible lasts until the agent's next activity log and
	// suppresses only the reflection-overdue check; checkpoints are still
	// expected.
	DeepWorkFlexible DeepWorkMode = "flexible"
	// DeepWorkStrict lasts until a planned end and suppresses the inactivity
	// and reflection checks until then.
	DeepWorkStrict DeepWorkMode = "strict"
)

// ParseDeepWorkMode returns the mode named by s ("flexible" or "strict",
// case and surrounding spaces ignored), or EINVALID naming the choices.
func ParseDeepWorkMode(s string) (DeepWorkMode, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case string(DeepWorkFlexible):
		return DeepWorkFlexible, nil
	case string(DeepWorkStrict):
		return DeepWorkStrict, nil
	case "":
		return "", Errorf(EINVALID, "mode is required: flexible (until your next activity log, checkpoints still expected) or strict (with planned_minutes, no checks until then)")
	}
	return "", Errorf(EINVALID, "mode %q is not a deep work mode: expected flexible or strict", s)
}

// DeepWorkState is the life-cycle state of a declaration: active, then
// completed or expired. Completed and expired declarations are history and
// never considered again.
type DeepWorkState string

// Deep work states.
const (
	DeepWorkActive    DeepWorkState = "active"
	DeepWorkCompleted DeepWorkState = "completed"
	DeepWorkExpired   DeepWorkState = "expired"
)

// DeepWorkEnd says what ended a declaration.
type DeepWorkEnd string

// Reasons a declaration ended.
const (
	EndedByActivityLog DeepWorkEnd = "activity_log" // completed by the agent's next activity log
	EndedByReplacement DeepWorkEnd = "replaced"     // completed because a new declaration replaced it
	EndedByExpiry      DeepWorkEnd = "expired"      // strict, its planned end passed without an activity log
	EndedByAdmin       DeepWorkEnd = "admin"        // ended by an admin (EndDeepWork)
)

// DefaultDeepWorkMax is the default longest strict declaration.
const DefaultDeepWorkMax = 4 * time.Hour

// MaxPlannedActivityBytes is the limit of a declaration's planned activity.
const MaxPlannedActivityBytes = 1 << 10

// DeepWork is one deep work declaration (SPEC §3).
type DeepWork struct {
	ID              int64
	AgentID         int64
	AgentName       string // filled when read back, for display
	Mode            DeepWorkMode
	PlannedActivity string
	HeartbeatID     string    // the agent's current heartbeat ID when declared
	StartedAt       time.Time //
	EndsAt          time.Time // the planned end; strict only, zero for flexible
	State           DeepWorkState
	EndedAt         time.Time   // when it was completed or expired (for expiry: EndsAt)
	EndReason       DeepWorkEnd // why it ended; empty while active
}

// IsActive reports whether the declaration is still in state active. A
// strict declaration past its end stays active until it is expired; use
// InForce to know whether it still suppresses checks.
func (d *DeepWork) IsActive() bool { return d != nil && d.State == DeepWorkActive }

// PastEnd reports whether d is strict and its planned end is at or before now.
func (d *DeepWork) PastEnd(now time.Time) bool {
	return d != nil && d.Mode == DeepWorkStrict && !now.Before(d.EndsAt)
}

// InForce reports whether d is active and, if strict, before its end.
func (d *DeepWork) InForce(now time.Time) bool {
	return d.IsActive() && !d.PastEnd(now)
}

// StartDeepWorkRequest is what an agent asks for with StartDeepWork. Exactly
// one of PlannedMinutes and Until is given for strict and neither for
// flexible; zero values mean "not given".
type StartDeepWorkRequest struct {
	Mode            string
	PlannedActivity string
	PlannedMinutes  int64
	Until           time.Time
}

// NewDeepWork checks req against the rules of SPEC §3 and returns the active
// declaration starting at now. Strict needs planned_minutes or until, and the
// planned length must be above zero and at most max (DefaultDeepWorkMax when
// max ≤ 0); flexible takes neither. Every broken rule returns EINVALID
// stating the rule.
func NewDeepWork(req StartDeepWorkRequest, now time.Time, max time.Duration) (DeepWork, error) {
	if max <= 0 {
		max = DefaultDeepWorkMax
	}
	mode, err := ParseDeepWorkMode(req.Mode)
	if err != nil {
		return DeepWork{}, err
	}
	planned := strings.TrimSpace(req.PlannedActivity)
	switch {
	case planned == "":
		return DeepWork{}, Errorf(EINVALID, "planned_activity is required: say briefly what you will work on")
	case len(planned) > MaxPlannedActivityBytes:
		return DeepWork{}, Errorf(EINVALID, "planned_activity is %d bytes long: at most %d bytes (1 KiB) are allowed", len(planned), MaxPlannedActivityBytes)
	case !utf8.ValidString(planned):
		return DeepWork{}, Errorf(EINVALID, "planned_activity must be valid UTF-8 text")
	}
	if err := checkLine("planned_activity", planned); err != nil {
		return DeepWork{}, err
	}
	dw := DeepWork{Mode: mode, PlannedActivity: planned, StartedAt: now, State: DeepWorkActive}
	maxMinutes := int64(max / time.Minute)

	if mode == DeepWorkFlexible {
		if req.PlannedMinutes != 0 || !req.Until.IsZero() {
			return DeepWork{}, Errorf(EINVALID, "flexible deep work lasts until your next activity log and takes no planned_minutes or until: leave them out, or use mode strict for a planned duration")
		}
		return dw, nil
	}

	switch {
	case req.PlannedMinutes != 0 && !req.Until.IsZero():
		return DeepWork{}, Errorf(EINVALID, "give planned_minutes or until for strict deep work, not both")
	case req.PlannedMinutes == 0 && req.Until.IsZero():
		return DeepWork{}, Errorf(EINVALID, "strict deep work needs planned_minutes (or until): the time by which you will surely have written an activity log, at most %d minutes; leave some margin", maxMinutes)
	case req.PlannedMinutes < 0:
		return DeepWork{}, Errorf(EINVALID, "planned_minutes is %d: it must be greater than 0 and at most %d", req.PlannedMinutes, maxMinutes)
	case req.PlannedMinutes > maxMinutes:
		return DeepWork{}, Errorf(EINVALID, "planned_minutes is %d: strict deep work lasts at most %d minutes (%s); declare again when it ends", req.PlannedMinutes, maxMinutes, FormatElapsed(max, LocaleEN))
	case req.PlannedMinutes > 0:
		dw.EndsAt = now.Add(time.Duration(req.PlannedMinutes) * time.Minute)
	case !req.Until.After(now):
		return DeepWork{}, Errorf(EINVALID, "until %s is not in the future: strict deep work must end after now (%s)", req.Until.Format(time.RFC3339), now.Format(time.RFC3339))
	case req.Until.Sub(now) > max:
		return DeepWork{}, Errorf(EINVALID, "until %s is %s from now: strict deep work lasts at most %s", req.Until.Format(time.RFC3339), FormatElapsed(req.Until.Sub(now), LocaleEN), FormatElapsed(max, LocaleEN))
	default:
		dw.EndsAt = req.Until
	}
	return dw, nil
}

// DeepWorkEffects says what a deep work transition did, for the store to
// persist and the response to show.
type DeepWorkEffects struct {
	Started  *DeepWork // the new declaration (StartDeepWork only); the store assigns its ID
	Replaced *DeepWork // the previous declaration, now completed by replacement
	Expired  *DeepWork // a strict declaration found past its end, now expired
	Events   []Event
	Notes    []string // texts for the agent, in order
}

// StartDeepWork makes dw (from NewDeepWork) the agent's active declaration.
// An active declaration is completed and reported as Replaced, or Expired if
// it was strict and past its end. A recorded strict expiry is cleared: the
// agent has reacted.
func StartDeepWork(st *LivenessState, dw DeepWork, now time.Time, loc Locale) DeepWorkEffects {
	var fx DeepWorkEffects
	if st.ActiveDeepWork.IsActive() {
		if exp, evs := ExpireDeepWork(st, now, loc); exp != nil {
			fx.Expired = exp
			fx.Events = append(fx.Events, evs...)
		} else {
			old := endDeepWork(st, now, DeepWorkCompleted, EndedByReplacement)
			fx.Replaced = old
			fx.Events = append(fx.Events, newEvent(st.AgentID, EventDeepWorkCompleted, now,
				loc.Text(MsgEventDeepWorkReplaced, old.Mode, old.PlannedActivity)))
			fx.Notes = append(fx.Notes, loc.Text(MsgDeepWorkReplaced, old.Mode, old.PlannedActivity))
		}
	}
	st.ExpiredDeepWork = nil
	dw.AgentID = st.AgentID
	dw.State = DeepWorkActive
	dw.StartedAt = now
	started := dw
	st.ActiveDeepWork = &started
	fx.Started = &started
	detail := loc.Text(MsgEventDeepWorkStartedFlexible, dw.PlannedActivity)
	if dw.Mode == DeepWorkStrict {
		detail = loc.Text(MsgEventDeepWorkStartedStrict, dw.PlannedActivity, dw.EndsAt.Format(time.RFC3339))
		fx.Notes = append(fx.Notes, loc.Text(MsgDeepWorkStartedStrict, dw.PlannedActivity,
			dw.EndsAt.Format("2006-01-02 15:04:05 MST"), FormatElapsed(dw.EndsAt.Sub(now), loc)))
	} else {
		fx.Notes = append(fx.Notes, loc.Text(MsgDeepWorkStartedFlexible, dw.PlannedActivity))
	}
	fx.Events = append(fx.Events, newEvent(st.AgentID, EventDeepWorkStarted, now, detail))
	return fx
}

// ExpireDeepWork marks the agent's active declaration expired when it is
// strict and its planned end has come (the orchestrator calls it each tick;
// activity logs and new declarations call it first too, so the outcome does
// not depend on tick timing). Its EndedAt is the planned end. Every check
// resumes at once, and the deep_work_expired finding holds until the next
// activity log. It returns nil when nothing expired.
func ExpireDeepWork(st *LivenessState, now time.Time, loc Locale) (*DeepWork, []Event) {
	dw := st.ActiveDeepWork
	if !dw.IsActive() || !dw.PastEnd(now) {
		return nil, nil
	}
	exp := endDeepWork(st, dw.EndsAt, DeepWorkExpired, EndedByExpiry)
	kept := *exp
	st.ExpiredDeepWork = &kept
	ev := newEvent(st.AgentID, EventDeepWorkExpired, now,
		loc.Text(MsgEventDeepWorkExpired, exp.PlannedActivity, exp.EndsAt.Format(time.RFC3339)))
	return exp, []Event{ev}
}

// EndDeepWorkByAdmin ends the agent's active declaration at an admin's
// request: every check resumes at once, and no reflection becomes due (no
// activity log was involved). A strict declaration already past its end is
// expired instead, as the orchestrator would have. It returns EPRECONDITION
// when no declaration is active.
func EndDeepWorkByAdmin(st *LivenessState, name string, now time.Time, loc Locale) (*DeepWork, []Event, error) {
	if !st.ActiveDeepWork.IsActive() {
		return nil, nil, Errorf(EPRECONDITION, "%s has no active deep work to end", name)
	}
	if exp, evs := ExpireDeepWork(st, now, loc); exp != nil {
		return exp, evs, nil
	}
	old := endDeepWork(st, now, DeepWorkCompleted, EndedByAdmin)
	ev := newEvent(st.AgentID, EventDeepWorkCompleted, now, loc.Text(MsgEventDeepWorkEndedByAdmin, old.Mode, old.PlannedActivity))
	return old, []Event{ev}, nil
}

// endDeepWork closes the active declaration and returns a copy of it.
func endDeepWork(st *LivenessState, at time.Time, state DeepWorkState, why DeepWorkEnd) *DeepWork {
	old := *st.ActiveDeepWork
	old.State, old.EndedAt, old.EndReason = state, at, why
	st.ActiveDeepWork = nil
	st.DeepWorkEndedAt = at
	return &old
}

// DeepWorkQuery selects declarations. Zero fields match all.
type DeepWorkQuery struct {
	AgentID int64
	State   DeepWorkState
	Limit   int
}
