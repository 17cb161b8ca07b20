package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agenthub/hub/internal/store/migration"
)

func migrations() ([]migration.Migration, error) { return migration.List(migration.SQLite) }

// migrate applies, in order and each in its own transaction, every
// migration of the list that the database does not hold, after numbering
// the ones it holds as the list does (migration.Renumber).
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	applied, err := db.renumber(ctx, ms)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range migration.Pending(applied, ms) {
		tx, err := db.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		// Another process opening the same file may have applied it
		// meanwhile: look under the write lock.
		var held bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`, m.Version).Scan(&held); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if held {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, migration.Record, m.Version, m.Name); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	db.schemaVersion = ms[len(ms)-1].Version
	return nil
}

// renumber numbers the rows of schema_migrations as ms does, under the
// write lock, and returns them; it refuses a database that holds a
// migration ms does not.
func (db *DB) renumber(ctx context.Context, ms []migration.Migration) ([]migration.Applied, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, migration.ReadApplied)
	if err != nil {
		return nil, err
	}
	applied, err := scanApplied(rows)
	if err != nil {
		return nil, err
	}
	out, changed, err := migration.Renumber(applied, ms)
	if err != nil || !changed {
		return out, err
	}
	if _, err := tx.ExecContext(ctx, migration.Negate); err != nil {
		return nil, err
	}
	for i, a := range out {
		if _, err := tx.ExecContext(ctx, migration.Number, a.Version, a.Name, -applied[i].Version); err != nil {
			return nil, err
		}
	}
	return out, tx.Commit()
}

func scanApplied(rows *sql.Rows) ([]migration.Applied, error) {
	defer rows.Close()
	var out []migration.Applied
	for rows.Next() {
		var a migration.Applied
		if err := rows.Scan(&a.Version, &a.Name); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
