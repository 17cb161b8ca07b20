package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/store/migration"

	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

func migrations() ([]migration.Migration, error) { return migration.Load(migrationFS, "migrations") }

// migrate applies every embedded migration newer than the schema's version,
// each in its own transaction, while holding a session advisory lock on one
// connection: replicas that start at the same moment queue on the lock, and
// the ones after the first find nothing left to do.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", connectError(db.conn, err))
	}
	defer conn.Release()
	key := lockKey("migrate", db.schema)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", db.friendly(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)

	// Look before creating: a replica whose role may not create tables
	// still starts on a schema that is already migrated.
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return db.migrateError("look for schema_migrations", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
			return db.migrateError("create schema_migrations", err)
		}
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return db.migrateError("read the schema version", err)
	}
	newest := 0
	for _, m := range ms {
		newest = m.Version
		if m.Version <= current {
			continue
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return db.migrateError(m.Name, err)
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			tx.Rollback(ctx)
			return db.migrateError(m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			tx.Rollback(ctx)
			return db.migrateError(m.Name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return db.migrateError(m.Name, err)
		}
		db.logger.Info("applied store migration", "migration", m.Name, "schema", db.schema)
	}
	if current > newest {
		return fmt.Errorf("migrate: the database is at schema version %d but this hub knows only up to %d: run a newer hub", current, newest)
	}
	db.schemaVersion = max(current, newest)
	return nil
}

// migrateError explains a failed migration step; a missing right gets a
// message that says which.
func (db *DB) migrateError(step string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeInsufficientPriv {
		return fmt.Errorf("migrate %s: role %q may not create or change the hub's tables in schema %q (%s): grant it CREATE and USAGE on the schema, or let a role that may run the first start",
			step, db.conn.User, db.schema, pe.Message)
	}
	return fmt.Errorf("migrate %s: %w", step, db.friendly(err))
}
