package hub

import "time"

// LivenessTx stores activity logs, checkpoints, deep work, per-agent liveness
// state and events. Owned by the liveness slice (issue 4).
type LivenessTx interface {
	// LivenessState returns the agent's liveness state with its active and
	// expired declarations loaded. An agent without a stored state (created
	// before the liveness schema) gets NewLivenessState(id, created_at).
	// ENOTFOUND if there is no such agent.
	LivenessState(agentID int64) (*LivenessState, error)
	// SaveLivenessState writes st (the declarations by ID only: write them
	// with InsertDeepWork/UpdateDeepWork) and the instant of its next
	// evaluation, zero for none.
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// DueLiveness returns the IDs of enabled agents whose next evaluation is
	// at or before now, earliest first, at most limit.
	DueLiveness(now time.Time, limit int) ([]int64, error)

	// InsertActivityLog inserts l and sets l.ID.
	InsertActivityLog(l *ActivityLog) error
	// InsertCheckpoint inserts c and sets c.ID.
	InsertCheckpoint(c *Checkpoint) error

	// InsertDeepWork inserts d and sets d.ID.
	InsertDeepWork(d *DeepWork) error
	// UpdateDeepWork writes d's state, ended_at and end reason. ENOTFOUND.
	UpdateDeepWork(d *DeepWork) error
	// ListDeepWork returns declarations matching q, newest first.
	ListDeepWork(q DeepWorkQuery) ([]*DeepWork, error)

	// InsertEvent inserts e and sets e.ID. AgentID 0 means a hub-wide event.
	InsertEvent(e *Event) error
	// ListEvents returns events matching q in ID order: the first Limit
	// after AfterID when it is set, else the newest Limit.
	ListEvents(q EventQuery) ([]*Event, error)
}

// DeepWorkQuery selects declarations. Zero fields match all.
type DeepWorkQuery struct {
	AgentID int64
	State   DeepWorkState
	Limit   int
}

// EventQuery selects events. Zero fields match all.
type EventQuery struct {
	AgentID int64
	Kind    EventKind
	Since   time.Time // created at or after
	AfterID int64
	Limit   int
}
