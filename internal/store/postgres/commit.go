package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file is the write path: Update queues its fn for the one writer
// goroutine of the process, which runs the queued writes in one
// transaction under the write lock (group commit).

// writeReq is one Update call waiting for the writer.
type writeReq struct {
	ctx context.Context
	fn  func(hub.Tx) error
	err chan error
}

// Update runs fn in a write transaction that holds the write lock, and
// commits it. Concurrent calls share a transaction, each in its own
// savepoint: fn's error (or panic, or a statement of fn that failed) rolls
// back fn's writes only. Update returns once PostgreSQL has committed
// (durably, under the server's synchronous_commit); once queued, a write's
// outcome is awaited even if ctx ends, so that no caller is told a write
// failed that in fact committed.
func (db *DB) Update(ctx context.Context, fn func(hub.Tx) error) error {
	req := &writeReq{ctx: ctx, fn: fn, err: make(chan error, 1)}
	db.closeMu.RLock()
	if db.closed {
		db.closeMu.RUnlock()
		return hub.Errorf(hub.EUNAVAILABLE, "the store is closed: the hub is shutting down")
	}
	select {
	case db.reqs <- req:
	case <-ctx.Done():
		db.closeMu.RUnlock()
		return ctx.Err()
	}
	db.closeMu.RUnlock()
	return <-req.err
}

// writeLoop takes the queued writes, as many as are waiting (up to
// maxBatch), and commits them together, until Close.
func (db *DB) writeLoop(maxBatch int) {
	defer close(db.done)
	batch := make([]*writeReq, 0, maxBatch)
	for req := range db.reqs {
		batch = append(batch[:0], req)
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-db.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		db.commit(batch)
	}
}

// commit runs a batch of writes in one transaction under the write lock.
// A batch of one runs fn directly (its error rolls the transaction back); a
// larger batch gives each fn a savepoint.
func (db *DB) commit(batch []*writeReq) {
	ctx := context.Background()
	fail := func(err error) {
		for _, r := range batch {
			r.err <- err
		}
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		fail(fmt.Errorf("begin write: %w", db.friendly(err)))
		return
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.writeKey); err != nil {
		fail(fmt.Errorf("take the write lock: %w", db.friendly(err)))
		return
	}
	t := &Tx{ctx: ctx, tx: tx, db: db}
	errs := make([]error, len(batch))
	if len(batch) == 1 {
		if errs[0] = batch[0].ctx.Err(); errs[0] == nil {
			errs[0] = call(batch[0].fn, t)
		}
		if errs[0] != nil {
			batch[0].err <- errs[0]
			return
		}
	} else if err := runSavepoints(ctx, tx, t, batch, errs); err != nil {
		fail(err)
		return
	}
	if err := tx.Commit(ctx); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("commit: %w", db.friendly(err))
			}
		}
	}
	for i, r := range batch {
		r.err <- errs[i]
	}
}

// codeInFailedTransaction is PostgreSQL's answer to a statement in a
// transaction that an earlier error aborted.
const codeInFailedTransaction = "25P02"

// runSavepoints runs each write of a batch in its own savepoint. A write
// whose fn failed, or whose statements failed even though fn returned nil
// (the transaction is then aborted and the savepoint cannot be released),
// is rolled back to its savepoint alone. It returns an error only when the
// savepoints themselves fail (the batch is then lost).
func runSavepoints(ctx context.Context, tx pgx.Tx, t *Tx, batch []*writeReq, errs []error) error {
	for i, r := range batch {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := tx.Exec(ctx, `SAVEPOINT w`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		if errs[i] = call(r.fn, t); errs[i] == nil {
			_, err := tx.Exec(ctx, `RELEASE w`)
			var pe *pgconn.PgError
			if err == nil {
				continue
			} else if !errors.As(err, &pe) || pe.Code != codeInFailedTransaction {
				return fmt.Errorf("release savepoint: %w", err)
			}
			errs[i] = fmt.Errorf("write rolled back: one of its statements failed and the error was not returned")
		}
		if _, err := tx.Exec(ctx, `ROLLBACK TO w`); err != nil {
			return fmt.Errorf("rollback to savepoint: %w", err)
		}
		if _, err := tx.Exec(ctx, `RELEASE w`); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	return nil
}

// call runs fn, turning a panic into an error so one bad write cannot take
// the writer (and every other pending write) down.
func call(fn func(hub.Tx) error, t *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(t)
}
