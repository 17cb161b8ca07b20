package hub

import "time"

// EventKind names a kind of liveness event.
type EventKind string

// Event kinds recorded by the liveness rules.
const (
	EventDeepWorkStarted   EventKind = "deep_work_started"
	EventDeepWorkCompleted EventKind = "deep_work_completed"
	EventDeepWorkExpired   EventKind = "deep_work_expired"
	EventReflectionSkipped EventKind = "reflection_skipped"
	EventReflectionWaived  EventKind = "reflection_waived"
	EventHealthChanged     EventKind = "health_changed"
)

// Event is one row of an agent's history: a health transition, a deep work
// start, completion or expiry, a reflection waiver or anomaly.
type Event struct {
	ID        int64
	AgentID   int64
	AgentName string // filled when read back, for display
	Kind      EventKind
	Detail    string
	CreatedAt time.Time
}

func newEvent(agentID int64, kind EventKind, at time.Time, detail string) Event {
	return Event{AgentID: agentID, Kind: kind, Detail: detail, CreatedAt: at}
}

// EventQuery selects events. Zero fields match all.
type EventQuery struct {
	AgentID int64
	Kind    EventKind
	Since   time.Time // created at or after
	AfterID int64
	Limit   int
}

// Event kinds recorded by the orchestrator.
const (
	EventNudge        EventKind = "nudge"         // a nudge was sent
	EventPulse        EventKind = "pulse"         // a heartbeat pulse was delivered
	EventCronDisabled EventKind = "cron_disabled" // a cron job was disabled by its errors
)
