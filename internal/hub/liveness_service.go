package hub

import (
	"sync"
	"time"
)

// Liveness is the service of what agents report about their work and what
// the hub judges of it: activity logs, checkpoints, deep work, health,
// presence, status and events.
type Liveness struct {
	*core
	store txs[livenessTx] // the store methods it uses

	onlineMu sync.Mutex
	onlineAt time.Time
	online   map[string]onlineNames // by project

	pathsMu   sync.Mutex
	pathsSeen time.Time // the newest stamp of the path rows read (loadPaths)
}

// livenessTx is what the liveness service reads and writes in one transaction:
// the store methods it uses, by their group.
type livenessTx interface {
	// ActivityTx
	InsertActivityLog(l *ActivityLog) error
	InsertCheckpoint(c *Checkpoint) error
	RecentActivityLogs(agentID int64, limit int) ([]*ActivityLog, error)
	RecentCheckpoints(agentID int64, limit int) ([]*Checkpoint, error)
	// AgentPathTx
	PathsSince(since time.Time, except string) ([]PathRow, time.Time, error)
	PutPaths(rows []PathRow, now time.Time) error
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	TouchAgents(touches []Touch) error
	StartHeartbeat(agentID int64, id string, startedAt time.Time) (unread, mentions int64, err error)
	// DeepWorkTx
	DeepWorkDeclarations(q DeepWorkQuery) ([]*DeepWork, error)
	InsertDeepWork(d *DeepWork) error
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	InsertEvents(es []Event) error
	ListEvents(q EventQuery) ([]*Event, error)
	// HealthTx
	AgentLiveness(agentID int64) (*Agent, *LivenessState, error)
	DueHealth(now time.Time, limit int) ([]AgentLiveness, error)
	DueLiveness(now time.Time, limit int) ([]int64, error)
	LivenessState(agentID int64) (*LivenessState, error)
	OverviewRows(all bool, ids []int64) ([]OverviewRow, error)
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	SaveLivenessStates(sts []*LivenessState, next []time.Time) error
	SetNextEvals(evals []AgentTime) error
	// MessageTx
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	// NudgeTx
	ScheduleAgentChecks(cs []AgentTime) error
	// ProjectTx
	LinkedProjects(name string) ([]string, error)
	// RetireTx
	RetireAgents(ids []int64, cutoff, at time.Time) ([]int64, error)
	RetireCandidates(cutoff, now time.Time, limit int) ([]RetireCandidate, error)
	ReturnAgents(ids []int64) ([]int64, error)
	// TaskTx
	TaskByID(id int64) (*Task, error)
}

// NewLiveness returns the liveness service.
func NewLiveness(c *Core) *Liveness {
	return &Liveness{core: c.core, store: txsOf[livenessTx](c.store)}
}
