// Package postgres implements hub.Store on PostgreSQL
// (github.com/jackc/pgx/v5), for several hub replicas sharing one
// database: a connection pool for reads and writes, a dedicated connection
// that LISTENs for other replicas' posts (Watch), and a leader lock for the
// orchestrator on another (Leader).
//
// Writes are serialised across every replica where a rule needs it, as
// SQLite serialises them within one file: each write transaction first
// takes a transaction-level advisory lock (the write lock), exclusively for
// the domain's read-decide-write rules, so that they see exactly the state
// they would see on SQLite and no concurrent writer can lose another's
// update; posts and heartbeats (hub.RowLocked) take it shared and rely on
// row locks, so that replicas post and beat side by side (commit.go). As
// on SQLite, a replica groups the Update calls that queue up meanwhile
// into one transaction, each in its own savepoint (group commit), so one
// commit's flush serves many writes.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storesql"
	"github.com/agenthub/hub/internal/store/tasksql"
	"github.com/agenthub/hub/internal/store/usagesql"
	"github.com/agenthub/hub/internal/store/writer"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options tune the store. The zero value is usable; the pool is tuned with
// the URL's pool_* parameters (pgxpool), for example pool_max_conns.
type Options struct {
	// Logger receives the migrations', the listener's and the leader's
	// reports (slog.Default if nil).
	Logger *slog.Logger
	// Clock paces the listener's reconnections and the leader's keep-alive
	// pings (hub.SystemClock if nil).
	Clock hub.Clock
}

// defaultMaxConns is the pool size unless the URL sets pool_max_conns: one
// connection writes at a time, the others serve reads (waits, inboxes,
// status) of up to a few hundred agents per replica.
const defaultMaxConns = 16

// A session that sits in an open transaction without a word from its
// replica is ended by the server after idleInTransactionLimit (a session
// setting, unless the URL sets one): a replica cut off from the database
// in the middle of a write would otherwise keep the write lock, and with
// it every other replica's writes, until the server noticed the dead
// connection (TCP keepalive: two hours by default; never through a proxy
// that keeps its side open). The hub's transactions never wait on anything
// but the database between two statements.
const (
	idleInTransaction      = "idle_in_transaction_session_timeout"
	idleInTransactionLimit = "5s"
)

// maxBatch caps how many Update calls share one commit.
const maxBatch = 256

// DB is a hub.Store on a PostgreSQL database (or one schema of it: the
// URL's search_path decides where the tables live).
type DB struct {
	pool   *pgxpool.Pool
	conn   *pgx.ConnConfig // for the dedicated connections of Watch and Leader
	logger *slog.Logger
	clock  hub.Clock

	schema   string // current_schema() of the pool's connections
	channel  string // the NOTIFY channel of posts in this schema
	changed  string // the NOTIFY channel of changed agents in this schema (agent.go)
	tasks    string // the NOTIFY channel of projects with tasks made ready (task.go)
	writeKey int64  // advisory lock key of the write lock
	leadKey  int64  // advisory lock key of the orchestrator leader

	writes *writer.Queue // Update calls, committed in batches (commit.go)
	closed atomic.Bool

	leaderOnce sync.Once
	leader     *Leader // see Leader

	schemaVersion int
}

var _ hub.Store = (*DB)(nil)

// Open connects to the database at url (postgres://USER:PASSWORD@HOST:PORT/DB,
// or a key=value connection string), checks that it is reachable and
// migrates it to the newest schema under an advisory lock, so that
// replicas starting together migrate once. Errors name what is wrong
// (the URL, the server, the role's rights) without the driver's internals
// or the password.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open store: the database URL is not valid (%s): expected postgres://USER:PASSWORD@HOST:PORT/DATABASE", parseReason(err))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if _, set := cfg.ConnConfig.RuntimeParams[idleInTransaction]; !set {
		cfg.ConnConfig.RuntimeParams[idleInTransaction] = idleInTransactionLimit
	}
	db := &DB{conn: cfg.ConnConfig.Copy(), logger: opts.Logger, clock: opts.Clock}
	if db.logger == nil {
		db.logger = slog.Default()
	}
	if db.clock == nil {
		db.clock = hub.SystemClock{}
	}
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open store: %w", connectError(cfg.ConnConfig, err))
	}
	if err := db.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&db.schema); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("open store: %w", connectError(cfg.ConnConfig, err))
	}
	if db.schema == "" {
		db.pool.Close()
		return nil, fmt.Errorf("open store: no schema to create the tables in: the search_path of role %q names no existing schema", cfg.ConnConfig.User)
	}
	// Keys and channel are per schema, so hubs in different schemas of one
	// database (tests, staging beside production) never block each other.
	db.channel = "hub_posted:" + db.schema
	db.changed = "hub_changed:" + db.schema
	db.tasks = "hub_tasks:" + db.schema
	db.writeKey = lockKey("write", db.schema)
	db.leadKey = lockKey("leader", db.schema)
	if err := db.migrate(ctx); err != nil {
		db.pool.Close()
		return nil, err
	}
	db.writes = writer.Start(maxBatch, db.commit)
	return db, nil
}

// lockKey derives an advisory lock key from a purpose and a schema (FNV-1a).
func lockKey(purpose, schema string) int64 {
	h := uint64(14695981039346656037)
	for _, b := range []byte("agenthub." + purpose + "." + schema) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return int64(h)
}

// SchemaVersion returns the number of the newest applied migration.
func (db *DB) SchemaVersion() int { return db.schemaVersion }

// Close waits for pending writes, then releases the leader lock and
// closes the pool.
func (db *DB) Close() error {
	if !db.writes.Close() {
		return nil
	}
	db.closed.Store(true)
	db.leaderOnce.Do(func() {}) // after any Leader call
	if db.leader != nil {
		db.leader.Resign(context.Background())
	}
	db.pool.Close()
	return nil
}

// View runs fn in a read-only transaction on one snapshot.
func (db *DB) View(ctx context.Context, fn func(hub.Tx) error) error {
	if db.closed.Load() {
		return hub.Errorf(hub.EUNAVAILABLE, "the store is closed: the hub is shutting down")
	}
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return db.failed(err, outageRead, "begin read")
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return outage(writer.Call(fn, newTx(&Tx{ctx: ctx, tx: tx, db: db})), outageRead)
}

// CountEvents returns how many events of kind the store holds (for the
// nudges and pulses counters of /metrics).
func (db *DB) CountEvents(ctx context.Context, kind string) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, dollars(storesql.CountEvents), kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, db.friendly(err))
	}
	return n, nil
}

// Tx is a hub.Tx over one PostgreSQL transaction. A constraint violation
// aborts the transaction (PostgreSQL's rule): the caller gets ECONFLICT or
// ENOTFOUND and must return it from fn.
type Tx struct {
	// Tx is tasksql's statements over this transaction: hub.TaskTx
	// (task.go; set by newTx).
	tasksql.Tx
	// Statements is the statements both stores share (storesql; set by
	// newTx).
	storesql.Statements
	// Usage is usagesql's statements over this transaction:
	// hub.UsageTx (set by newTx).
	usagesql.Usage
	ctx context.Context
	tx  pgx.Tx
	db  *DB

	// shared: a write transaction under the shared write lock (commit.go),
	// where only the writes of sharedWrite may run.
	shared bool
	// deadlocked: under the shared lock, the current Update call lost a
	// deadlock (or a serialisation failure); it runs again under the
	// exclusive lock.
	deadlocked bool
	// pending holds the posts of the current Update call under the shared
	// lock; posts, those of the batch's writes that succeeded, written at
	// the end of the batch (InsertMessages).
	pending, posts []pendingPost
	// locked holds the agent rows the current Update call locked
	// (AgentByID under the shared lock), as they were read.
	locked map[int64]lockedAgent
}

var _ hub.Tx = (*Tx)(nil)

// sharedWrite says whether a write may run under the shared write lock,
// side by side with other replicas' writes. These may, and lose no update:
//
//   - a post (InsertMessages, nextMessageIDs): its IDs come from the
//     counter row, whose lock serialises every post until commit, and its
//     deliveries' counter rows (inbox_counts) move only under that lock;
//     the read cursors those counters depend on move only under the
//     exclusive lock (UpdateAgent);
//   - a channel created or joined on the way (EnsureChannel, InsertChannelMember):
//     inserts that do nothing when the row exists;
//   - an agent's own row, read with its row lock by AgentByID and written
//     back by UpdateAgent: the lock makes the read-modify-write atomic
//     against every other writer of that row;
//   - a heartbeat's columns of an agent's row (StartHeartbeat): one UPDATE
//     that decides nothing from an earlier read, under the row lock it
//     takes itself.
//
// Reads run anywhere: what a shared write decides from them is covered
// above. Any other write in a transaction under the shared lock is refused
// (errNeedsExclusive): the Update that tried it was wrongly marked
// hub.RowLocked.
type sharedWrite bool

const (
	sharedSafe sharedWrite = true  // the statement may run under the shared lock
	needsLock  sharedWrite = false // a write needs the exclusive lock; a read runs anyway
)

// errNeedsExclusive refuses a write that the shared lock does not cover.
var errNeedsExclusive = errors.New("postgres store: this write needs the exclusive write lock, but its Update was marked hub.RowLocked")

// allow refuses q under the shared lock unless it is a read or a shared
// write.
func (t *Tx) allow(q string, w sharedWrite) error {
	if t.shared && w != sharedSafe && !isRead(q) {
		return fmt.Errorf("%w: %.40s…", errNeedsExclusive, strings.TrimSpace(q))
	}
	return nil
}

// isRead reports whether q is a plain query (the store's statements that
// write start with INSERT, UPDATE or DELETE).
func isRead(q string) bool {
	q = strings.TrimLeft(q, " \t\n")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// Deadlock and serialisation failures: a write under the shared lock that
// lost to another replica's runs again under the exclusive lock.
const (
	codeDeadlock      = "40P01"
	codeSerialization = "40001"
)

// outcome records a lost deadlock, then maps constraint errors.
func (t *Tx) outcome(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if t.shared && errors.As(err, &pe) && (pe.Code == codeDeadlock || pe.Code == codeSerialization) {
		t.deadlocked = true
		return errRunExclusive
	}
	return mapErr(err)
}

func (t *Tx) exec(q string, args ...any) (pgconn.CommandTag, error) {
	return t.execAs(needsLock, q, args...)
}

func (t *Tx) execAs(w sharedWrite, q string, args ...any) (pgconn.CommandTag, error) {
	if err := t.allow(q, w); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := t.tx.Exec(t.ctx, q, args...)
	return tag, t.outcome(err)
}

func (t *Tx) query(q string, args ...any) (pgx.Rows, error) {
	if err := t.allow(q, needsLock); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx, q, args...)
	return rows, t.outcome(err)
}

// mappedRow is a pgx.Row whose Scan maps errors (Tx.outcome).
type mappedRow struct {
	t   *Tx
	r   pgx.Row
	err error // the statement was refused
}

func (r mappedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.t.outcome(r.r.Scan(dest...))
}

func (t *Tx) queryRow(q string, args ...any) mappedRow {
	return t.queryRowAs(needsLock, q, args...)
}

func (t *Tx) queryRowAs(w sharedWrite, q string, args ...any) mappedRow {
	if err := t.allow(q, w); err != nil {
		return mappedRow{err: err}
	}
	return mappedRow{t: t, r: t.tx.QueryRow(t.ctx, q, args...)}
}

// queryColumn runs a query of one column and returns its values.
func queryColumn[T any](t *Tx, q string, args ...any) ([]T, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	return out, t.outcome(err)
}

// scanRows scans every row of rows with scan.
func scanRows[T any](rows pgx.Rows, err error, scan func(pgx.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, mapErr(rows.Err())
}

// PostgreSQL error codes the store translates.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeInsufficientPriv    = "42501"
)

// mapErr turns constraint violations into hub errors.
func mapErr(err error) error {
	if err == nil {
		return nil // before errors.As, whose target would be allocated on every statement
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return hub.Errorf(hub.ECONFLICT, "already exists (%s)", pe.ConstraintName)
		case codeForeignKeyViolation:
			return hub.Errorf(hub.ENOTFOUND, "refers to a record that does not exist (%s)", pe.ConstraintName)
		}
	}
	return err
}

// list returns xs for a TEXT[] column: never NULL.
func list(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// unlist returns a TEXT[] column's value as the domain holds it: nil when
// empty.
func unlist(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
