package sqlite

import (
	"context"
	"embed"
	"fmt"

	"github.com/agenthub/hub/internal/store/migration"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

func migrations() ([]migration.Migration, error) { return migration.Load(migrationFS, "migrations") }

// migrate applies, in order and each in its own transaction, every embedded
// migration newer than the database's schema version.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := db.w.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	newest := 0
	for _, m := range ms {
		newest = m.Version
		if m.Version <= current {
			continue
		}
		tx, err := db.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		// Another process opening the same file may have applied it
		// meanwhile: look again under the write lock.
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if m.Version <= current {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	if current > newest {
		return fmt.Errorf("migrate: the database is at schema version %d but this hub knows only up to %d: run a newer hub", current, newest)
	}
	db.schemaVersion = max(current, newest)
	return nil
}
