// Package postgres implements hub.Store on PostgreSQL
// (github.com/jackc/pgx/v5), for several hub replicas sharing one
// database: a connection pool for reads and writes, a dedicated connection
// that LISTENs for other replicas' posts (Watch), and a leader lock for the
// orchestrator on another (Leader).
//
// Writes are serialised across every replica, as SQLite serialises them
// within one file: each write transaction first takes a transaction-level
// advisory lock (the write lock), so the domain's read-decide-write rules
// see exactly the state they would see on SQLite and no concurrent writer
// can lose another's update. As on SQLite, a replica groups the Update
// calls that queue up meanwhile into one transaction, each in its own
// savepoint (group commit), so one commit's flush serves many writes.
// Replicas add read, wait and connection capacity; writes go one
// transaction at a time.
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
}

// defaultMaxConns is the pool size unless the URL sets pool_max_conns: one
// connection writes at a time, the others serve reads (waits, inboxes,
// status) of up to a few hundred agents per replica.
const defaultMaxConns = 16

// maxBatch caps how many Update calls share one commit.
const maxBatch = 256

// DB is a hub.Store on a PostgreSQL database (or one schema of it: the
// URL's search_path decides where the tables live).
type DB struct {
	pool   *pgxpool.Pool
	conn   *pgx.ConnConfig // for the dedicated connections of Watch and Leader
	logger *slog.Logger

	schema   string // current_schema() of the pool's connections
	channel  string // the NOTIFY channel of posts in this schema
	changed  string // the NOTIFY channel of changed agents in this schema (agent.go)
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
	db := &DB{conn: cfg.ConnConfig.Copy(), logger: opts.Logger}
	if db.logger == nil {
		db.logger = slog.Default()
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
		return fmt.Errorf("begin read: %w", db.friendly(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return writer.Call(fn, &Tx{ctx: ctx, tx: tx, db: db})
}

// CountEvents returns how many events of kind the store holds (for the
// nudges and pulses counters of /metrics).
func (db *DB) CountEvents(ctx context.Context, kind string) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM events WHERE kind = $1`, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, db.friendly(err))
	}
	return n, nil
}

// Tx is a hub.Tx over one PostgreSQL transaction. A constraint violation
// aborts the transaction (PostgreSQL's rule): the caller gets ECONFLICT or
// ENOTFOUND and must return it from fn.
type Tx struct {
	ctx context.Context
	tx  pgx.Tx
	db  *DB
}

var _ hub.Tx = (*Tx)(nil)

func (t *Tx) exec(q string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.tx.Exec(t.ctx, q, args...)
	return tag, mapErr(err)
}

func (t *Tx) query(q string, args ...any) (pgx.Rows, error) {
	rows, err := t.tx.Query(t.ctx, q, args...)
	return rows, mapErr(err)
}

// mappedRow is a pgx.Row whose Scan maps constraint errors.
type mappedRow struct{ r pgx.Row }

func (r mappedRow) Scan(dest ...any) error { return mapErr(r.r.Scan(dest...)) }

func (t *Tx) queryRow(q string, args ...any) mappedRow {
	return mappedRow{t.tx.QueryRow(t.ctx, q, args...)}
}

// queryColumn runs a query of one column and returns its values.
func queryColumn[T any](t *Tx, q string, args ...any) ([]T, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	return out, mapErr(err)
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

func quote(s string) string { return `"` + s + `"` }
