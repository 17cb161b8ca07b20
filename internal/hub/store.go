package hub

import (
	"context"
	"time"
)

// Store is the hub's persistence. Implementations: internal/store/sqlite
// (one process) and internal/store/postgres (replicas on one database).
//
// Update runs fn in a write transaction and commits it; an error returned by
// fn rolls back fn's writes (and only fn's: a store may group several Update
// calls into one commit, each in its own savepoint). Update returns once the
// writes are durable to the configured level, so the caller may acknowledge
// them. fn must not keep tx, and must not have effects outside the store:
// the parked callers a write concerns are woken from what its statements
// record (ChangesTx, wake.go) once it has committed.
//
// View runs fn in a read-only snapshot.
type Store interface {
	Update(ctx context.Context, fn func(tx Tx) error) error
	View(ctx context.Context, fn func(tx Tx) error) error
	// Close waits for pending writes and closes the store.
	Close() error
}

// Tx is what a transaction can do. Methods return *Error values with codes
// ENOTFOUND and ECONFLICT where said, and wrapped driver errors otherwise.
//
// The interface is split by noun; each group is declared in its noun's
// service file (AgentTx in agent_service.go, NudgeTx in nudge_service.go...).
// Every "due" query is served by an index on the due time, so a tick costs
// the same whatever the number of agents and the length of history.
type Tx interface {
	AgentTx
	MessageTx
	MetaTx
	ActivityTx
	DeepWorkTx
	HealthTx
	EventTx
	NudgeTx
	PulseTx
	CronTx
	RetentionTx
	ReservationTx
	JoinCodeTx
	InjectionTx
	SearchTx
	ReceiptTx
	ProjectTx
	AgentDeleteTx
	TaskTx
	InboxTx
	PersonTx
	WebhookTx
	AgentPathTx
	RetireTx
	DigestTx
	NoticeTx
	UsageTx
	BudgetTx
	ChangesTx
}

// MetaTx stores small hub-wide values (the beat counter, schema facts).
type MetaTx interface {
	// Meta returns the value stored under key, "" if none.
	Meta(key string) (string, error)
	// SetMeta stores value under key.
	SetMeta(key, value string) error
	// SwapMeta stores value under key only if the stored value is still old
	// ("": none stored), and reports whether it did (compare-and-set).
	SwapMeta(key, old, value string) (bool, error)
}

// SentKept is how long a store keeps its records of the pulses sent
// (PulseTx.RecordPulse): far longer than any orchestrator can act on a
// stale state.
const SentKept = 24 * time.Hour

// AgentTime is a time for one agent: when its health is next evaluated
// (zero: never by itself), when its nudge check is next due.
type AgentTime struct {
	AgentID int64
	At      time.Time
}

// rowLockedKey marks a context for RowLocked.
type rowLockedKey struct{}

// RowLocked marks ctx for an Update whose fn writes only new messages (with
// the channels it creates or joins on the way), heartbeats
// (StartHeartbeat), and agent rows it read with AgentByID in the same fn,
// leaving their read cursor and enabled state as they were. A store with
// several writers (PostgreSQL replicas) may run such a write beside other
// writers, with row locks making each read-modify-write atomic, and may run fn a second time after rolling back the first (a lost
// deadlock): fn must set, not accumulate, what it leaves outside the store.
// Such a store may also write the messages fn inserts only after fn returns
// (their IDs are set by the time Update returns): fn must not read them
// back. A store with one writer ignores the mark.
func RowLocked(ctx context.Context) context.Context {
	return context.WithValue(ctx, rowLockedKey{}, true)
}

// IsRowLocked reports whether ctx was marked by RowLocked.
func IsRowLocked(ctx context.Context) bool {
	marked, _ := ctx.Value(rowLockedKey{}).(bool)
	return marked
}

type leaderWorkKey struct{}

// LeaderWork marks ctx as the orchestrator's, run because this process
// leads: a store shared by several processes makes each Update called with
// it only if this process still holds the leadership when the write runs,
// and otherwise returns EPRECONDITION and writes nothing (fencing): a
// leader cut off from the store, whose tick outlives its lock, writes
// nothing once another may lead. A store with one process ignores the
// mark.
func LeaderWork(ctx context.Context) context.Context {
	return context.WithValue(ctx, leaderWorkKey{}, true)
}

// IsLeaderWork reports whether ctx was marked by LeaderWork.
func IsLeaderWork(ctx context.Context) bool {
	marked, _ := ctx.Value(leaderWorkKey{}).(bool)
	return marked
}
