// Package sqlite implements hub.Store on an embedded SQLite file
// (github.com/mattn/go-sqlite3) in WAL mode: one writer connection that
// groups concurrent writes into one commit, and a pool of read-only
// connections. One file per noun of internal/hub implements that noun's
// queries (agent.go implements hub.AgentTx, nudge.go hub.NudgeTx, ...).
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storesql"
	"github.com/agenthub/hub/internal/store/tasksql"
	"github.com/agenthub/hub/internal/store/usagesql"
	"github.com/agenthub/hub/internal/store/writer"
	"github.com/mattn/go-sqlite3"
)

// Options tune the store. The zero value is usable.
type Options struct {
	// Synchronous is SQLite's synchronous setting: "NORMAL" (default) keeps
	// every committed write across a process crash (kill -9) — in WAL mode
	// the commit is in the OS before Update returns — but the last commits
	// may be lost if the machine loses power; "FULL" fsyncs the WAL on every
	// commit and survives power loss too, at a cost in throughput.
	Synchronous string
	// MaxBatch caps how many Update calls share one commit (default 256).
	MaxBatch int
	// Readers is the size of the read connection pool (default 2×CPUs, ≥ 4).
	Readers int
	// BusyTimeout is how long a connection waits for a lock held by another
	// process (default 5 s).
	BusyTimeout time.Duration
	// MaxSize caps the database file in bytes (0: no cap); past it writes
	// fail as on a full disk (diskfull.go).
	MaxSize int64
	// Clock runs the store's own waits: the retries of a first open of a
	// locked file and the gap between checkpoints (the system clock when
	// nil).
	Clock hub.Clock
}

// DB is a hub.Store backed by one SQLite file.
type DB struct {
	path string
	r    *sql.DB // read-only pool
	w    *sql.DB // exactly one connection: the writer
	// wc is w's connection, held for the DB's life, and raw its driver
	// connection: the writer goroutine alone uses them (commit, and the
	// checkpointer's catchUp after it). raw is used outside wc.Raw's
	// callback; that is sound only because wc is never released before
	// Close, so database/sql never hands the connection to anyone else,
	// and because the connection is opened without SQLite's mutex
	// (_mutex=no), no other goroutine may ever use either.
	wc  *sql.Conn
	raw *sqlite3.SQLiteConn

	writes *writer.Queue // Update calls, committed in batches by commit
	ckpt   *checkpointer // copies the write-ahead log into the file (checkpoint.go)
	names  *addressees   // what the writer's transactions read of agents by name (addressees.go)
	// control is the writer's transaction statements, prepared on its
	// driver connection once: BEGIN, COMMIT, ROLLBACK (commit), SAVEPOINT,
	// ROLLBACK TO, RELEASE (runSavepoints).
	control [6]driver.StmtExecContext
	// version reads PRAGMA data_version on the writer's connection
	// (dataVersion), prepared with control.
	version driver.StmtQueryContext
	// values is the writer's transactions' buffer of statement
	// arguments (Tx.values), kept from one commit to the next.
	values []driver.NamedValue

	// plainDSN opens a connection with the store's settings (the
	// checkpointer's; Backup's own).
	plainDSN string

	schemaVersion int
	full          atomic.Bool // the last write failed for want of space (diskfull.go)
}

var _ hub.Store = (*DB)(nil)

// Open opens (creating if needed) the database at path and migrates it to
// the newest schema.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "NORMAL"
	}
	opts.Synchronous = strings.ToUpper(opts.Synchronous)
	switch opts.Synchronous {
	case "NORMAL", "FULL", "EXTRA", "OFF":
	default:
		return nil, fmt.Errorf("open store: synchronous %q is not one of NORMAL, FULL, EXTRA, OFF", opts.Synchronous)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, 2*runtime.NumCPU())
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := createPrivate(path); err != nil { // files.go
		return nil, fmt.Errorf("open store: %w", err)
	}
	dsn := func(params ...string) string {
		v := url.Values{}
		// The file is this process's alone: SQLite's locks in memory, the
		// log's index in the heap (files.go).
		v.Set("vfs", "unix-excl")
		v.Set("_journal_mode", "WAL")
		v.Set("_synchronous", opts.Synchronous)
		v.Set("_foreign_keys", "on")
		v.Set("_busy_timeout", fmt.Sprint(opts.BusyTimeout.Milliseconds()))
		v.Set("_stmt_cache_size", "64") // reuse prepared statements: parsing was ~17% of the hub CPU per post
		for i := 0; i+1 < len(params); i += 2 {
			v.Set(params[i], params[i+1])
		}
		return "file:" + uriPath(path) + "?" + v.Encode()
	}
	if err := register(); err != nil { // bm25.go
		return nil, fmt.Errorf("open store: %w", err)
	}
	names := &addressees{}
	w := sql.OpenDB(newWriterConnector(dsn("_txlock", "immediate", "_mutex", "no"), names))
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := pingBusy(ctx, w, opts.BusyTimeout, opts.Clock); err != nil {
		w.Close()
		if isBusy(err) {
			return nil, errElsewhere(path, err) // files.go
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db := &DB{path: path, w: w, names: names}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := names.arm(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := db.limitSize(ctx, opts.MaxSize); err != nil {
		w.Close()
		return nil, err
	}
	wc, err := w.Conn(ctx)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.wc = wc
	if err := wc.Raw(func(dc any) error { db.raw = dc.(*sqlite3.SQLiteConn); return nil }); err != nil {
		wc.Close()
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	for i, q := range []string{"BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "SAVEPOINT w", "ROLLBACK TO w", "RELEASE w"} {
		st, err := db.raw.Prepare(q)
		if err != nil {
			wc.Close()
			w.Close()
			return nil, fmt.Errorf("open store: prepare %s: %w", q, err)
		}
		db.control[i] = st.(driver.StmtExecContext)
	}
	st, err := db.raw.Prepare(`PRAGMA data_version`)
	if err != nil {
		wc.Close()
		w.Close()
		return nil, fmt.Errorf("open store: prepare PRAGMA data_version: %w", err)
	}
	db.version = st.(driver.StmtQueryContext)
	r, err := sql.Open("sqlite3", dsn("_txlock", "deferred", "_query_only", "1"))
	if err != nil {
		wc.Close()
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	db.r = r
	db.plainDSN = dsn()
	if db.ckpt, err = startCheckpointer(db.plainDSN, opts.BusyTimeout, opts.Clock); err != nil {
		r.Close()
		wc.Close()
		w.Close()
		return nil, err
	}
	db.ckpt.committed() // the migrations may have filled the log
	db.writes = writer.Start(opts.MaxBatch, db.commit)
	return db, nil
}

// uriPath escapes the characters of a file path that SQLite's URI parser
// would read as a query ('?'), a fragment ('#') or an escape ('%').
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// SchemaVersion returns the number of the newest applied migration.
func (db *DB) SchemaVersion() int { return db.schemaVersion }

// Close waits for pending writes, then closes the connections.
func (db *DB) Close() error {
	if !db.writes.Close() {
		return nil
	}
	errs := []error{db.ckpt.close(), db.r.Close()}
	for _, st := range db.control {
		errs = append(errs, st.(driver.Stmt).Close())
	}
	errs = append(errs, db.version.(driver.Stmt).Close())
	return errors.Join(append(errs, db.wc.Close(), db.w.Close())...)
}

// Update runs fn in a write transaction. Concurrent calls are grouped into
// one commit (group commit), each in its own savepoint so that one call's
// error rolls back only its own writes. Update returns after the commit.
func (db *DB) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return db.writes.Update(ctx, fn)
}

// QueuedWrites returns how many writes wait for the writer.
func (db *DB) QueuedWrites() int { return db.writes.Queued() }

// WriteBatches returns how many batches of writes the writer has committed
// together, and how many writes they held.
func (db *DB) WriteBatches() (batches, writes int64) { return db.writes.Batches() }

// View runs fn in a read-only transaction on a pooled connection. A ctx
// that ended keeps it from beginning; once begun, it runs to its end
// whatever ctx does, a read taking microseconds to milliseconds. The
// transaction is the connection's own BEGIN … ROLLBACK, not a database/sql
// transaction, its statements run on the driver connection (driver.go),
// and they watch no context: database/sql and the driver would start a
// goroutine per transaction and per statement to watch one (four for a
// stream's look: most of the goroutines a busy hub started).
func (db *DB) View(ctx context.Context, fn func(hub.Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	c, err := db.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer c.Close()
	// The transaction runs inside Raw, which holds the connection for it;
	// database/sql closes a connection whose callback returns
	// driver.ErrBadConn (or panics).
	berr := c.Raw(func(dc any) error {
		t := newTx(&Tx{ctx: ctx, raw: dc.(*sqlite3.SQLiteConn)})
		if err = t.control("BEGIN"); err != nil {
			err = fmt.Errorf("begin read: %w", err)
			return nil
		}
		err = fn(t)
		if rerr := t.control("ROLLBACK"); rerr != nil {
			// A connection whose transaction may still be open goes.
			err = errors.Join(err, fmt.Errorf("end read: %w", rerr))
			return driver.ErrBadConn
		}
		return nil
	})
	if berr != nil && !errors.Is(berr, driver.ErrBadConn) {
		return fmt.Errorf("begin read: %w", berr)
	}
	return err
}

// commit runs a batch of writes in one transaction. A batch of one runs
// fn directly (its error rolls the transaction back); a larger batch gives
// each fn a savepoint, so that an error rolls back only that fn's writes.
// The transaction is the writer connection's own BEGIN … COMMIT, not a
// database/sql transaction: database/sql starts a goroutine for every
// transaction and for every query in one (to close them if the context
// ends), and the writer's context never ends.
func (db *DB) commit(batch []*writer.Request) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	begin, commit, rollback := db.control[0], db.control[1], db.control[2]
	tx := func(st driver.StmtExecContext) error {
		_, err := st.ExecContext(ctx, nil)
		return mapErr(err)
	}
	if err := tx(begin); err != nil {
		for _, r := range batch {
			r.Done(db.outcome(fmt.Errorf("begin write: %w", err)))
		}
		return
	}
	t := newTx(&Tx{ctx: ctx, names: db.names, raw: db.raw, values: db.values})
	defer func() {
		v := t.values[:cap(t.values)]
		clear(v) // the values are not kept past the commit
		db.values = v[:0]
	}()
	if err := db.names.begin(db.dataVersion); err != nil {
		tx(rollback)
		for _, r := range batch {
			r.Done(db.outcome(err))
		}
		return
	}
	if len(batch) == 1 {
		if errs[0] = batch[0].Ctx.Err(); errs[0] == nil {
			errs[0] = writer.Call(batch[0].Fn, t)
		}
		if errs[0] == nil {
			errs[0] = t.flushIndex()
		}
		if errs[0] != nil {
			tx(rollback)
			db.names.clear()
			batch[0].Done(db.outcome(errs[0]))
			return
		}
	} else if err := db.runSavepoints(ctx, t, batch, errs); err != nil {
		tx(rollback)
		db.names.clear()
		for _, e := range errs {
			if isFull(e) {
				err = e // SQLite may have ended the transaction: the cause is the full disk
			}
		}
		for _, r := range batch {
			r.Done(db.outcome(err))
		}
		return
	}
	if err := tx(commit); err != nil {
		tx(rollback) // SQLite may leave the transaction open
		db.names.clear()
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("commit: %w", err)
			}
		}
	} else {
		db.ckpt.committed()
	}
	defer db.ckpt.catchUp(ctx, db.wc) // after the replies
	for i, r := range batch {
		r.Done(db.outcome(errs[i]))
	}
}

// dataVersion reads PRAGMA data_version on the writer's connection: it
// changes when another connection has committed since the last read.
func (db *DB) dataVersion() (int64, error) {
	rows, err := db.version.QueryContext(context.Background(), nil)
	if err != nil {
		return 0, fmt.Errorf("data version: %w", err)
	}
	defer rows.Close()
	var v [1]driver.Value
	if err := rows.Next(v[:]); err != nil {
		return 0, fmt.Errorf("data version: %w", err)
	}
	n, ok := v[0].(int64)
	if !ok {
		return 0, fmt.Errorf("data version: got %T, want an integer", v[0])
	}
	return n, nil
}

// runSavepoints runs each write of a batch in its own savepoint. It
// returns an error only when the savepoints themselves fail (the batch is
// then lost).
func (db *DB) runSavepoints(ctx context.Context, t *Tx, batch []*writer.Request, errs []error) error {
	savepoint, rollbackTo, release := db.control[3], db.control[4], db.control[5]
	for i, r := range batch {
		if errs[i] = r.Ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := savepoint.ExecContext(ctx, nil); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		indexed := len(t.unindexed)
		if errs[i] = writer.Call(r.Fn, t); errs[i] != nil {
			t.unindexed = t.unindexed[:indexed]
			t.names.clear()
			if _, err := rollbackTo.ExecContext(ctx, nil); err != nil {
				return fmt.Errorf("rollback to savepoint: %w", err)
			}
		}
		if _, err := release.ExecContext(ctx, nil); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	return t.flushIndex()
}

// Tx is a hub.Tx over one SQLite transaction.
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
	// unindexed are the messages this transaction wrote that the
	// full-text index does not hold yet (indexMessage).
	unindexed []indexEntry
	// names is the writer's cache of addressees; nil in read transactions.
	names *addressees
	// args is the arguments of execRowsShared's statements, reused.
	args []any
	// raw is the driver connection the statements run on (driver.go): the
	// writer's, or a pooled reader's held for View.
	raw *sqlite3.SQLiteConn
	// values is the arguments of the statement being run, reused.
	values []driver.NamedValue
}

var _ hub.Tx = (*Tx)(nil)

// insert runs an INSERT of the writer's transaction and returns the
// row's ID. The values are of the driver's types (int64, string, bool).
func (t *Tx) insert(q string, args ...driver.Value) (int64, error) {
	t.values = t.values[:0]
	for _, a := range args {
		t.arg(a)
	}
	res, err := t.execValues(q)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// arg appends v to the arguments of the next execValues.
func (t *Tx) arg(v driver.Value) {
	t.values = append(t.values, driver.NamedValue{Ordinal: len(t.values) + 1, Value: v})
}

// execValues runs q with the arguments in values (driver.go).
func (t *Tx) execValues(q string) (driver.Result, error) {
	res, err := t.raw.ExecContext(t.ctx, q, t.values)
	return res, mapErr(err)
}

// mapErr turns constraint violations into hub errors.
func mapErr(err error) error {
	if err == nil {
		return nil // before errors.As, whose target would be allocated on every statement
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
		switch se.ExtendedCode {
		case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
			return hub.Errorf(hub.ECONFLICT, "already exists (%v)", se)
		case sqlite3.ErrConstraintForeignKey:
			return hub.Errorf(hub.ENOTFOUND, "refers to a record that does not exist (%v)", se)
		}
	}
	return err
}

// pingBusy opens w's connection, retrying for up to patience while the
// file is locked: turning a new file into WAL mode takes an exclusive lock
// that SQLite does not wait for, so processes opening one fresh file at
// once would otherwise fail with "database is locked".
func pingBusy(ctx context.Context, w *sql.DB, patience time.Duration, clock hub.Clock) error {
	deadline := clock.Now().Add(patience)
	var retry hub.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		err := w.PingContext(ctx)
		if !isBusy(err) || clock.Now().After(deadline) {
			return err
		}
		if retry == nil {
			retry = clock.NewTimer(10 * time.Millisecond)
		} else {
			retry.Reset(10 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-retry.C():
		}
	}
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrBusy
}
