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
// Update calls to commit, which runs them in transactions of many writes
// each (group commit) under the write lock.
//
// The write lock is a transaction-level advisory lock per schema, taken
// first in every write transaction (so it is never a link in a deadlock
// cycle with row locks). Writes marked hub.RowLocked (posts, heartbeats)
// take it in shared mode: the replicas' transactions of such writes run
// side by side, and only the writes proven safe under row locks may run in
// them (sharedWrite in postgres.go): a post serialises on the message ID
// counter row (message.go), a change of an agent's own row locks that row
// (AgentByID, UpdateAgent in agent.go). Every other write takes the lock
// exclusively: no other writer of any replica runs meanwhile, so the
// read-decide-write rules written for one writer (read cursors and their
// counters, health, deep work, nudges, cron, reservations, tokens) see
// exactly the state they would see on SQLite and lose no update. A shared
// write that loses a deadlock to another replica's (say two agents' rows
// locked in opposite orders, which PostgreSQL detects after its
// deadlock_timeout) is rolled back and run again under the exclusive lock.

// Update runs fn in a write transaction and commits it. Concurrent calls
// share a transaction, each in its own savepoint: fn's error (or panic, or
// a statement of fn that failed) rolls back fn's writes only. Update
// returns once PostgreSQL has committed (durably, under the server's
// synchronous_commit); once queued, a write's outcome is awaited even if
// ctx ends, so that no caller is told a write failed that in fact
// committed. A fn marked hub.RowLocked may run twice (see above); its
// first run's writes are rolled back.
func (db *DB) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return db.writes.Update(ctx, fn)
}

// QueuedWrites returns how many writes wait for the writer.
func (db *DB) QueuedWrites() int { return db.writes.Queued() }

// WriteBatches returns how many batches of writes the writer has committed
// together, and how many writes they held.
func (db *DB) WriteBatches() (batches, writes int64) { return db.writes.Batches() }

// errRunExclusive marks a write to run again under the exclusive lock.
var errRunExclusive = errors.New("run again under the exclusive write lock")

// commit runs a batch of writes: those marked hub.RowLocked in one
// transaction under the shared write lock, then the others, with any
// shared write that lost a deadlock, in one under the exclusive lock.
func (db *DB) commit(batch []*writer.Request) {
	var shared, exclusive []*writer.Request
	for _, r := range batch {
		if hub.IsRowLocked(r.Ctx) {
			shared = append(shared, r)
		} else {
			exclusive = append(exclusive, r)
		}
	}
	if len(shared) > 0 {
		exclusive = append(exclusive, db.commitBatch(shared, true)...)
	}
	if len(exclusive) > 0 {
		db.commitBatch(exclusive, false)
	}
}

// commitBatch runs a batch of writes in one transaction under the write
// lock, shared or exclusive, and returns the writes of a shared batch
// that must run again under the exclusive lock (they are not answered). A
// batch of one runs fn directly (its error rolls the transaction back); a
// larger batch gives each fn a savepoint.
func (db *DB) commitBatch(batch []*writer.Request, shared bool) (again []*writer.Request) {
	ctx := context.Background()
	fail := func(err error) {
		for _, r := range batch {
			r.Done(err)
		}
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		fail(db.failed(err, outageWrite, "begin write"))
		return nil
	}
	defer tx.Rollback(ctx)
	lock := `SELECT pg_advisory_xact_lock($1)`
	if shared {
		lock = `SELECT pg_advisory_xact_lock_shared($1)`
	}
	if _, err := tx.Exec(ctx, lock, db.writeKey); err != nil {
		fail(db.failed(err, outageWrite, "take the write lock"))
		return nil
	}
	t := newTx(&Tx{ctx: ctx, tx: tx, db: db, shared: shared})
	errs := make([]error, len(batch))
	if len(batch) == 1 {
		if errs[0] = batch[0].Ctx.Err(); errs[0] == nil {
			errs[0] = t.runRequest(batch[0])
		}
		if errors.Is(errs[0], errRunExclusive) {
			return batch
		}
		if errs[0] != nil {
			batch[0].Done(outage(errs[0], outageWrite))
			return nil
		}
		t.kept()
	} else if err := runSavepoints(ctx, tx, t, batch, errs); err != nil {
		fail(outage(err, outageWrite))
		return nil
	}
	if err := t.flushPosts(); err != nil {
		// The batch's posts could not be written (in the shared
		// batch, whose writers cannot delete what posts refer to, this
		// should not happen): the writes that succeeded run again under
		// the exclusive lock, one by one in their savepoints, where a post
		// that fails says why.
		for i, r := range batch {
			if errs[i] == nil || errors.Is(errs[i], errRunExclusive) {
				again = append(again, r)
			} else {
				r.Done(errs[i])
			}
		}
		return again
	}
	if err := tx.Commit(ctx); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = db.failed(err, outageCommit, "commit")
			}
		}
	}
	for i, r := range batch {
		if errors.Is(errs[i], errRunExclusive) {
			again = append(again, r)
			continue
		}
		r.Done(outage(errs[i], outageWrite))
	}
	return again
}

// run calls fn on t and returns errRunExclusive when fn lost a deadlock
// under the shared lock (whatever fn itself returned, as fn may have
// swallowed the error).
func (t *Tx) run(fn func(hub.Tx) error) error {
	t.deadlocked, t.locked, t.pending = false, nil, nil
	err := writer.Call(fn, t)
	if t.deadlocked {
		return errRunExclusive
	}
	return err
}

// kept keeps the posts of the Update call that just succeeded.
func (t *Tx) kept() { t.posts = append(t.posts, t.pending...) }

// codeInFailedTransaction is PostgreSQL's answer to a statement in a
// transaction that an earlier error aborted.
const codeInFailedTransaction = "25P02"

// runSavepoints runs each write of a batch in its own savepoint. A write
// whose fn failed, or whose statements failed even though fn returned nil
// (the transaction is then aborted and the savepoint cannot be released),
// is rolled back to its savepoint alone; so is one to run again under the
// exclusive lock (its error is errRunExclusive). It returns an error only
// when the savepoints themselves fail (the batch is then lost).
func runSavepoints(ctx context.Context, tx pgx.Tx, t *Tx, batch []*writer.Request, errs []error) error {
	for i, r := range batch {
		if errs[i] = r.Ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := tx.Exec(ctx, `SAVEPOINT w`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		if errs[i] = t.runRequest(r); errs[i] == nil {
			_, err := tx.Exec(ctx, `RELEASE w`)
			var pe *pgconn.PgError
			if err == nil {
				t.kept()
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
