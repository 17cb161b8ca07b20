package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/writer"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file is the write path: the store's writer.Queue hands the queued
// Update calls to commit, which runs them in one transaction under the
// write lock (group commit).

// Update runs fn in a write transaction that holds the write lock, and
// commits it. Concurrent calls share a transaction, each in its own
// savepoint: fn's error (or panic, or a statement of fn that failed) rolls
// back fn's writes only. Update returns once PostgreSQL has committed
// (durably, under the server's synchronous_commit); once queued, a write's
// outcome is awaited even if ctx ends, so that no caller is told a write
// failed that in fact committed.
func (db *DB) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return db.writes.Update(ctx, fn)
}

// QueuedWrites returns how many writes wait for the writer.
func (db *DB) QueuedWrites() int { return db.writes.Queued() }

// commit runs a batch of writes in one transaction under the write lock.
// A batch of one runs fn directly (its error rolls the transaction back); a
// larger batch gives each fn a savepoint.
func (db *DB) commit(batch []*writer.Request) {
	ctx := context.Background()
	fail := func(err error) {
		for _, r := range batch {
			r.Done(err)
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
		if errs[0] = batch[0].Ctx.Err(); errs[0] == nil {
			errs[0] = writer.Call(batch[0].Fn, t)
		}
		if errs[0] != nil {
			batch[0].Done(errs[0])
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
		r.Done(errs[i])
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
func runSavepoints(ctx context.Context, tx pgx.Tx, t *Tx, batch []*writer.Request, errs []error) error {
	for i, r := range batch {
		if errs[i] = r.Ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := tx.Exec(ctx, `SAVEPOINT w`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		if errs[i] = writer.Call(r.Fn, t); errs[i] == nil {
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
