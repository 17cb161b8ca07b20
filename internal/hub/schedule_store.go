package hub

import "time"

// ScheduleTx stores what the orchestrator schedules: the per-agent check
// schedule (health sweep, nudges), heartbeat pulses, cron jobs and their
// runs. Every "due" query is served by an index on the due time, so a tick
// costs the same whatever the number of agents and the length of history.
// (The beat counter lives in MetaTx: see LoadBeatState.)
type ScheduleTx interface {
	SweepTx // batched reads and writes of the health sweep and nudge checks

	// DueAgentChecks returns up to limit agent IDs whose next check is due
	// at now, the most overdue first.
	DueAgentChecks(now time.Time, limit int) ([]int64, error)
	// AgentCheck returns an agent's check schedule and nudge state; a zero
	// AgentCheck for the agent if none is stored.
	AgentCheck(agentID int64) (AgentCheck, error)
	// PutAgentCheck stores c (insert or replace).
	PutAgentCheck(c AgentCheck) error
	// ScheduleAgentCheck moves an agent's next check to at if that is
	// earlier than the stored one (or none is stored).
	ScheduleAgentCheck(agentID int64, at time.Time) error
	// MentionsAfter returns the mention deliveries of messages with an ID
	// above afterID, up to limit, oldest first, except the orchestrator's
	// own (nudges).
	MentionsAfter(afterID int64, limit int) ([]MentionDelivery, error)
	// UnreadMentions counts the messages mentioning agentID with an ID
	// above readUpTo, except the orchestrator's own (nudges), and returns
	// the oldest one's time.
	UnreadMentions(agentID, readUpTo int64) (n int64, oldest time.Time, err error)

	// PutPulseConfig stores an agent's pulse config, keeping its state, and
	// sets its next check to nextCheckAt.
	PutPulseConfig(cfg PulseConfig, nextCheckAt time.Time) error
	// Pulse returns an agent's pulse config and state. ENOTFOUND when the
	// agent has none.
	Pulse(agentID int64) (*Pulse, error)
	// ListPulses returns every pulse config with its state, by agent name.
	ListPulses() ([]*Pulse, error)
	// DuePulses returns up to limit agent IDs of enabled pulses whose next
	// check is due at now.
	DuePulses(now time.Time, limit int) ([]int64, error)
	// PutPulseState stores an agent's pulse state and next check. ENOTFOUND
	// when the agent has no pulse config.
	PutPulseState(st PulseState, nextCheckAt time.Time) error

	// CreateCronJob inserts j and sets j.ID. ECONFLICT when the name is taken.
	CreateCronJob(j *CronJob) error
	// CronJobByName returns one job. ENOTFOUND.
	CronJobByName(name string) (*CronJob, error)
	// CronJobByID returns one job. ENOTFOUND.
	CronJobByID(id int64) (*CronJob, error)
	// ListCronJobs returns every job by name.
	ListCronJobs() ([]*CronJob, error)
	// UpdateCronJob writes every mutable field of j. ENOTFOUND.
	UpdateCronJob(j *CronJob) error
	// DeleteCronJob deletes a job (its runs stay as history). ENOTFOUND.
	DeleteCronJob(id int64) error
	// DueCronJobs returns up to limit enabled jobs whose next run is due at
	// now, the most overdue first.
	DueCronJobs(now time.Time, limit int) ([]*CronJob, error)
	// InsertCronRun stores r and sets r.ID; it keeps the newest
	// MaxCronRunsKept runs of the job and drops older ones.
	InsertCronRun(r *CronRun) error
	// ListCronRuns returns the newest runs, of one job when jobID > 0,
	// newest first.
	ListCronRuns(jobID int64, limit int) ([]*CronRun, error)
}

// MaxCronRunsKept is how many runs of each job the store keeps.
const MaxCronRunsKept = 10000

// AgentCheck is an agent's place in the orchestrator's check schedule and
// its nudge episode.
type AgentCheck struct {
	AgentID     int64
	NextCheckAt time.Time // zero: nothing scheduled
	// Nudge episode: Episode identifies what the nudges are about (the
	// inactivity since a given activity, or the unread mentions since a
	// given message); a new episode starts when it changes.
	Episode     string
	NudgeCount  int
	LastNudgeAt time.Time
}

// MentionDelivery is one message mentioning one agent.
type MentionDelivery struct {
	AgentID   int64
	MessageID int64
	CreatedAt time.Time
}

// Pulse is an agent's pulse config with its state.
type Pulse struct {
	AgentName   string
	Config      PulseConfig
	State       PulseState
	NextCheckAt time.Time
}
