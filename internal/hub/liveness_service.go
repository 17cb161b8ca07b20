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

	onlineMu sync.Mutex
	onlineAt time.Time
	online   map[string]onlineNames // by project
}

// livenessTx is what the liveness service reads and writes in one transaction:
// the store groups of its nouns.
type livenessTx interface {
	ActivityTx
	AgentTx
	DeepWorkTx
	EventTx
	HealthTx
	MessageTx
	NudgeTx
	ProjectTx
	TaskTx // checkpoints and logs naming a task
}

// NewLiveness returns the liveness service.
func NewLiveness(c *Core) *Liveness { return &Liveness{core: c.core} }
