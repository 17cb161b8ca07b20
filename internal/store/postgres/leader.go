package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Leader decides which replica runs the orchestrator (it implements
// orchestrator.Leader): the one holding a session advisory lock on its own
// dedicated connection.
//
// A session advisory lock rather than a lease row: PostgreSQL releases it
// the moment the holder's session ends — a killed process, a closed or
// terminated connection — so a replica takes over at its next tick, with no
// expiry to wait for and no clock to trust; and there is nothing to renew
// or clean up. Its limit: it needs a real session, so the hub's
// connections must not go through a transaction-pooling proxy (PgBouncer
// in transaction mode); a lease row would survive that. A leader whose
// network silently dies keeps the lock until the server notices the dead
// connection (TCP keepalive), and its own next Lead fails its ping and
// reports false.
type Leader struct {
	db  *DB
	cfg *pgx.ConnConfig
	key int64

	mu   sync.Mutex
	conn *pgx.Conn // nil when not connected
	held bool
}

// leaderCallTimeout bounds each round trip of Lead and Resign, so that a
// dead network cannot hold up the orchestrator loop.
const leaderCallTimeout = 5 * time.Second

// Leader returns the store's leader lock (the same one on every call; the
// store's Close releases it).
func (db *DB) Leader() *Leader {
	db.leaderOnce.Do(func() {
		cfg := db.conn.Copy()
		cfg.RuntimeParams["application_name"] = applicationName("hub leader", db.schema)
		db.leader = &Leader{db: db, cfg: cfg, key: db.leadKey}
	})
	return db.leader
}

// Lead reports whether this replica leads, taking the lock if it is free.
// While it leads, each call checks with a round trip that the lock's
// connection is still alive (the lock dies with it).
func (l *Leader) Lead(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, leaderCallTimeout)
	defer cancel()
	if l.held {
		err := l.conn.Ping(ctx)
		if err == nil {
			return true, nil
		}
		l.db.logger.Warn("lost the orchestrator leader lock with its connection; another replica may lead now", "err", err)
		l.dropLocked()
	}
	if l.conn == nil {
		conn, err := pgx.ConnectConfig(ctx, l.cfg)
		if err != nil {
			return false, fmt.Errorf("leader lock: %w", connectError(l.cfg, err))
		}
		l.conn = conn
	}
	var got bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, l.key).Scan(&got); err != nil {
		l.dropLocked()
		return false, fmt.Errorf("leader lock: %w", l.db.friendly(err))
	}
	if got {
		l.db.logger.Info("this replica now runs the orchestrator (took the leader lock)")
	}
	l.held = got
	return got, nil
}

// Resign releases the lock, if held, and closes its connection: another
// replica takes over at its next tick. The explicit unlock makes the lock
// free when Resign returns (the server ends a closed session a little
// later).
func (l *Leader) Resign(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.held {
		ctx, cancel := context.WithTimeout(ctx, leaderCallTimeout)
		defer cancel()
		if _, err = l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.key); err != nil {
			err = fmt.Errorf("release the leader lock: %w (it is released when the connection closes)", err)
		}
		l.db.logger.Info("resigned the orchestrator leader lock")
	}
	l.dropLocked()
	return err
}

// dropLocked closes the lock's connection, which releases the lock.
func (l *Leader) dropLocked() {
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), leaderCallTimeout)
		l.conn.Close(ctx)
		cancel()
	}
	l.conn, l.held = nil, false
}
