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
// the store groups of its nouns.
type livenessTx interface {
	ActivityTx
	AgentPathTx
	AgentTx
	DeepWorkTx
	EventTx
	HealthTx
	MessageTx
	NudgeTx
	ProjectTx
	taskByIDTx // checkpoints and logs naming a task
	RetireTx
}

// NewLiveness returns the liveness service.
func NewLiveness(c *Core) *Liveness {
	return &Liveness{core: c.core, store: txsOf[livenessTx](c.store)}
}
