package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthub/hub/internal/store/migration"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func migrations() ([]migration.Migration, error) { return migration.List(migration.PostgreSQL) }

// migrate applies every migration of the list that the schema does not
// hold, each in its own transaction, after numbering the ones it holds as
// the list does (migration.Renumber), while holding a session advisory
// lock on one connection: replicas that start at the same moment queue on
// the lock, and the ones after the first find nothing left to do.
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
	applied, err := db.renumber(ctx, conn.Conn(), ms)
	if err != nil {
		return err
	}
	for _, m := range migration.Pending(applied, ms) {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return db.migrateError(m.Name, err)
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			tx.Rollback(ctx)
			return db.migrateError(m.Name, err)
		}
		if _, err := tx.Exec(ctx, dollars(migration.Record), m.Version, m.Name); err != nil {
			tx.Rollback(ctx)
			return db.migrateError(m.Name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return db.migrateError(m.Name, err)
		}
		db.logger.Info("applied store migration", "migration", m.Name, "schema", db.schema)
	}
	db.schemaVersion = ms[len(ms)-1].Version
	return nil
}

// renumber numbers the rows of schema_migrations as ms does and returns
// them; it refuses a schema that holds a migration ms does not.
func (db *DB) renumber(ctx context.Context, conn *pgx.Conn, ms []migration.Migration) ([]migration.Applied, error) {
	rows, _ := conn.Query(ctx, migration.ReadApplied)
	applied, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (migration.Applied, error) {
		var a migration.Applied
		return a, r.Scan(&a.Version, &a.Name)
	})
	if err != nil {
		return nil, db.migrateError("read the schema's migrations", err)
	}
	out, changed, err := migration.Renumber(applied, ms)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if !changed {
		return out, nil
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, db.migrateError("renumber the schema's migrations", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, migration.Negate); err != nil {
		return nil, db.migrateError("renumber the schema's migrations", err)
	}
	for i, a := range out {
		if _, err := tx.Exec(ctx, dollars(migration.Number), a.Version, a.Name, -applied[i].Version); err != nil {
			return nil, db.migrateError("renumber the schema's migrations", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, db.migrateError("renumber the schema's migrations", err)
	}
	db.logger.Info("renumbered the schema's migrations as the one list does", "schema", db.schema)
	return out, nil
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
