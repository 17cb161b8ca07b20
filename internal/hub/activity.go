package hub

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ActivityType is the kind of activity an activity log closes.
type ActivityType string

// Activity types (SPEC §3). Japanese aliases are accepted on input by
// ParseActivityType and stored as these canonical values.
const (
	ActivityThinking    ActivityType = "thinking"
	ActivityObservation ActivityType = "observation"
	ActivityCreation    ActivityType = "creation"
	ActivityReflection  ActivityType = "reflection"
	ActivityOther       ActivityType = "other"
)

// ActivityTypes lists the canonical activity types in a stable order.
var ActivityTypes = []ActivityType{ActivityThinking, ActivityObservation, ActivityCreation, ActivityReflection, ActivityOther}

var activityAliases = map[string]ActivityType{
	"思考":  ActivityThinking,
	"観測":  ActivityObservation,
	"観察":  ActivityObservation,
	"創造":  ActivityCreation,
	"内省":  ActivityReflection,
	"その他": ActivityOther,
}

// ParseActivityType returns the canonical type named by s: one of thinking,
// observation, creation, reflection, other (case and surrounding spaces
// ignored) or a Japanese alias 思考, 観測, 創造, 内省, その他. Anything else
// returns EINVALID listing the accepted values.
func ParseActivityType(s string) (ActivityType, error) {
	v := strings.TrimSpace(s)
	for _, t := range ActivityTypes {
		if strings.EqualFold(v, string(t)) {
			return t, nil
		}
	}
	if t, ok := activityAliases[v]; ok {
		return t, nil
	}
	if v == "" {
		return "", Errorf(EINVALID, "type is required: expected one of thinking, observation, creation, reflection, other (or 思考, 観測, 創造, 内省)")
	}
	return "", Errorf(EINVALID, "type %q is not an activity type: expected one of thinking, observation, creation, reflection, other (or 思考, 観測, 創造, 内省)", s)
}

// Label returns the type's name in locale loc ("reflection" / "内省").
func (t ActivityType) Label(loc Locale) string {
	switch t {
	case ActivityThinking:
		return loc.Text(MsgTypeThinking)
	case ActivityObservation:
		return loc.Text(MsgTypeObservation)
	case ActivityCreation:
		return loc.Text(MsgTypeCreation)
	case ActivityReflection:
		return loc.Text(MsgTypeReflection)
	case ActivityOther:
		return loc.Text(MsgTypeOther)
	}
	return string(t)
}

// Limits of an activity log's fields, counted in characters (runes).
const (
	MaxTitleChars        = 200
	MaxContentLines      = 200
	MaxContentLineChars  = 4000
	MaxContentTotalBytes = 64 << 10
	MaxTags              = 20
	MaxTagChars          = 64
	MaxUrgentReasonChars = 1000
)

// ActivityLog is the record an agent writes when it finishes an activity
// (SPEC §3). HeartbeatID and CreatedAt are set by the hub, never by the agent.
type ActivityLog struct {
	ID           int64
	AgentID      int64
	Type         ActivityType
	Title        string
	Content      []string
	Tags         []string
	UrgentReason string // set by an agent facing an emergency to postpone a due reflection
	TaskID       int64  // the task it reports on, 0 for none
	HeartbeatID  string
	CreatedAt    time.Time
}

// NormalizeActivityLog checks the agent-supplied fields of l and puts them in
// canonical form: Type resolved through ParseActivityType, title, tags and
// urgent reason trimmed, trailing empty content lines dropped. It returns
// EINVALID saying what is expected for the first field that is wrong.
func NormalizeActivityLog(l *ActivityLog) error {
	t, err := ParseActivityType(string(l.Type))
	if err != nil {
		return err
	}
	l.Type = t

	l.Title = strings.TrimSpace(l.Title)
	if l.Title == "" {
		return Errorf(EINVALID, "title is required: a short summary of the activity, at most %d characters", MaxTitleChars)
	}
	if n := utf8.RuneCountInString(l.Title); n > MaxTitleChars {
		return Errorf(EINVALID, "title is %d characters long: at most %d are allowed", n, MaxTitleChars)
	}
	if strings.ContainsAny(l.Title, "\r\n") {
		return Errorf(EINVALID, "title must be a single line: put details in content")
	}
	if err := checkLine("title", l.Title); err != nil {
		return err
	}

	for len(l.Content) > 0 && strings.TrimSpace(l.Content[len(l.Content)-1]) == "" {
		l.Content = l.Content[:len(l.Content)-1]
	}
	if len(l.Content) > MaxContentLines {
		return Errorf(EINVALID, "content has %d lines: at most %d are allowed", len(l.Content), MaxContentLines)
	}
	total := 0
	for i, line := range l.Content {
		if !utf8.ValidString(line) {
			return Errorf(EINVALID, "content line %d must be valid UTF-8 text", i+1)
		}
		if n := utf8.RuneCountInString(line); n > MaxContentLineChars {
			return Errorf(EINVALID, "content line %d is %d characters long: at most %d per line are allowed", i+1, n, MaxContentLineChars)
		}
		total += len(line)
	}
	if total > MaxContentTotalBytes {
		return Errorf(EINVALID, "content is %d bytes in total: at most %d bytes (64 KiB) are allowed", total, MaxContentTotalBytes)
	}

	tags, err := normalizeTags(l.Tags)
	if err != nil {
		return err
	}
	l.Tags = tags

	l.UrgentReason = strings.TrimSpace(l.UrgentReason)
	if n := utf8.RuneCountInString(l.UrgentReason); n > MaxUrgentReasonChars {
		return Errorf(EINVALID, "urgent_reason is %d characters long: at most %d are allowed", n, MaxUrgentReasonChars)
	}
	if err := checkLine("urgent_reason", l.UrgentReason); err != nil {
		return err
	}
	return nil
}

// normalizeTags trims tags, drops duplicates and checks their number and form.
func normalizeTags(in []string) ([]string, error) {
	if len(in) > MaxTags {
		return nil, Errorf(EINVALID, "%d tags given: at most %d are allowed", len(in), MaxTags)
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, tag := range in {
		tag = strings.TrimSpace(tag)
		switch {
		case tag == "":
			return nil, Errorf(EINVALID, "tag %d is empty: a tag is a word of 1 to %d characters", i+1, MaxTagChars)
		case utf8.RuneCountInString(tag) > MaxTagChars:
			return nil, Errorf(EINVALID, "tag %q is too long: at most %d characters are allowed", tag, MaxTagChars)
		case !utf8.ValidString(tag):
			return nil, Errorf(EINVALID, "tag %d must be valid UTF-8 text", i+1)
		case strings.IndexFunc(tag, unicode.IsSpace) >= 0:
			return nil, Errorf(EINVALID, "tag %q contains a space: a tag is a single word (use - or _ to join words)", tag)
		}
		if err := checkLine("tag", tag); err != nil {
			return nil, err
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
	}
	return out, nil
}

// MaxCurrentActivityBytes is the limit of a checkpoint's text (1 KiB).
const MaxCurrentActivityBytes = 1 << 10

// Checkpoint is a one-line "I am consciously still working on X" (SPEC §3),
// filed by the hub under the agent's current heartbeat ID.
type Checkpoint struct {
	ID              int64
	AgentID         int64
	TaskID          int64 // the task it reports on, 0 for none
	CurrentActivity string
	HeartbeatID     string
	CreatedAt       time.Time
}

// NormalizeCheckpoint trims the checkpoint's text and returns EINVALID when it
// is empty, longer than 1 KiB, not one line or not UTF-8.
func NormalizeCheckpoint(c *Checkpoint) error {
	c.CurrentActivity = strings.TrimSpace(c.CurrentActivity)
	switch {
	case c.CurrentActivity == "":
		return Errorf(EINVALID, "current_activity is required: one short line saying what you are working on")
	case len(c.CurrentActivity) > MaxCurrentActivityBytes:
		return Errorf(EINVALID, "current_activity is %d bytes long: at most %d bytes (1 KiB) are allowed", len(c.CurrentActivity), MaxCurrentActivityBytes)
	case !utf8.ValidString(c.CurrentActivity):
		return Errorf(EINVALID, "current_activity must be valid UTF-8 text")
	case strings.ContainsAny(c.CurrentActivity, "\r\n"):
		return Errorf(EINVALID, "current_activity must be a single line")
	}
	return checkLine("current_activity", c.CurrentActivity)
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
