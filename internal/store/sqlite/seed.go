package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// SeedAgents creates a migrated store at path holding n agents named
// agent-000001 …, with IDs 1 to n, created at created, whose health
// evaluation and nudge check are both due at next; with token set, agent
// i's token is token(i). The rows are bulk-inserted by INSERT … SELECT over
// a counter, in one transaction: the load benchmarks (hubbench's tick
// scenario, the orchestrator's BenchmarkTick) need 100,000 agents in
// seconds, and CreateAgent would measure registration instead (hub
// bench-seed, hidden, runs it on a data dir for hubbench).
func SeedAgents(ctx context.Context, path string, n int, created, next time.Time, token func(id int) string) error {
	db, err := Open(ctx, path, Options{})
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	return bulkWrite(ctx, path, func(tx *sql.Tx) error {
		return seedAgents(ctx, tx, n, created, next, token)
	})
}

func seedAgents(ctx context.Context, tx *sql.Tx, n int, created, next time.Time, token func(id int) string) error {
	const ids = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) `
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{ids + `INSERT INTO agents (id, name, created_at) SELECT i, printf('agent-%06d', i), ? FROM n`, []any{n, row.Nanos(created)}},
		{ids + `INSERT INTO liveness (agent_id, created_at, next_eval_at) SELECT i, ?, ? FROM n`, []any{n, row.Nanos(created), row.Nanos(next)}},
		{ids + `INSERT INTO agent_checks (agent_id, next_check_at) SELECT i, ? FROM n`, []any{n, row.Nanos(next)}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	if token != nil {
		st, err := tx.PrepareContext(ctx, `UPDATE agents SET token_hash = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for id := 1; id <= n; id++ {
			if _, err := st.ExecContext(ctx, hub.HashToken(token(id)), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// bulkWrite runs fn in one transaction on the migrated store at path,
// through a connection of its own (no group commit, no statement cache):
// for bulk loads that benchmarks need.
func bulkWrite(ctx context.Context, path string, fn func(tx *sql.Tx) error) error {
	raw, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		return err
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// SeedDue makes agents lo to hi (IDs, as SeedAgents numbers them) of the
// store at path due for a health evaluation and a nudge check at at: the
// tick that runs at or after at evaluates and nudges them.
func SeedDue(ctx context.Context, path string, lo, hi int, at time.Time) error {
	return bulkWrite(ctx, path, func(tx *sql.Tx) error {
		for _, q := range []string{
			`UPDATE liveness SET next_eval_at = ? WHERE agent_id BETWEEN ? AND ?`,
			`UPDATE agent_checks SET next_check_at = ? WHERE agent_id BETWEEN ? AND ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, row.Nanos(at), lo, hi); err != nil {
				return err
			}
		}
		return nil
	})
}
