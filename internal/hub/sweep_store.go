package hub

import "time"

// SweepTx is the store side of the orchestrator's batched health sweep and
// nudge checks (sweep_batch.go): the due agents' rows are read in a few
// set-based queries driven by the due indexes, and the writes that every
// due agent needs are made in one statement each, so that a tick's cost per
// due agent is that of evaluating it, not of a dozen round trips.
type SweepTx interface {
	// DueHealth returns up to limit enabled agents whose next health
	// evaluation is due at now, earliest first (the agents DueLiveness
	// returns), each with its liveness state as LivenessState returns it.
	// ENOTFOUND when a state names a declaration that does not exist.
	DueHealth(now time.Time, limit int) ([]AgentLiveness, error)
	// SetNextEvals sets the next evaluation instant of each agent's stored
	// liveness state, leaving the rest of the state as it is.
	SetNextEvals(evals []AgentTime) error
	// SaveLivenessStates does SaveLivenessState(sts[i], next[i]) for each i.
	SaveLivenessStates(sts []*LivenessState, next []time.Time) error
	// DueNudges returns up to limit agents whose nudge check is due at now,
	// the most overdue first (the agents DueAgentChecks returns), each with
	// its check, its liveness state (as LivenessState) and its unread
	// mentions (as UnreadMentions).
	DueNudges(now time.Time, limit int) ([]DueNudge, error)
	// PutAgentChecks stores every check of cs (insert or replace).
	PutAgentChecks(cs []AgentCheck) error
	// ScheduleAgentChecks does ScheduleAgentCheck(c.AgentID, c.At) for each
	// c of cs.
	ScheduleAgentChecks(cs []AgentTime) error
	// InsertMessages does InsertMessage(ms[i], ds[i]) for each i, in order
	// (so the IDs it sets increase with i).
	InsertMessages(ms []*Message, ds [][]Delivery) error
	// InsertEvents inserts es in order (AgentID 0: hub-wide); it does not
	// set their IDs.
	InsertEvents(es []Event) error
}

// AgentLiveness is an agent with its stored liveness state (DueHealth).
type AgentLiveness struct {
	Agent *Agent
	State *LivenessState
	// Stale is true when the stored row differs from State without any
	// rule having run: it names a declaration that is no longer active
	// (closed by hand), which State leaves out. Saving State clears it.
	Stale bool
}

// DueNudge is what a nudge check reads about one agent (DueNudges).
type DueNudge struct {
	Agent          *Agent
	Check          AgentCheck
	State          *LivenessState
	UnreadMentions int64     // unread messages mentioning the agent (not counting nudges)
	OldestMention  time.Time // the oldest of them
}

// AgentTime is a time for one agent: when its health is next evaluated
// (zero: never by itself), when its nudge check is next due.
type AgentTime struct {
	AgentID int64
	At      time.Time
}
