package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
// in transaction mode); a lease row would survive that.
//
// A leader whose network silently dies (a partition, a proxy that keeps
// its side open) would keep the lock until the server noticed the dead
// connection, two hours by default. So while it holds the lock, the
// leader pings its connection every leaderKeepEvery, and the server ends
// the session after leaderSilence without a word from it (its
// idle_session_timeout, PostgreSQL 14 and later; older servers fall back
// on TCP keepalives, asked for every few seconds): the others take over
// within leaderSilence and a tick. The cut-off leader knows first: a ping
// that gets no answer within leaderPingTimeout drops the lock's connection
// and its next Lead reports false.
type Leader struct {
	db  *DB
	cfg *pgx.ConnConfig
	key int64

	mu   sync.Mutex
	conn *pgx.Conn // nil when not connected
	held bool      // conn holds the lock

	// fence names the session holding the lock while held (nil
	// otherwise), for the check of the orchestrator's writes (fence.go)
	// and the end of the leadership (Lost).
	fence atomic.Pointer[leaderSession]
}

// leaderCallTimeout bounds the connection and lock of Lead and Resign, so
// that a dead network cannot hold up the orchestrator loop.
const leaderCallTimeout = 5 * time.Second

// How the leader keeps its lock alive, and how soon the server ends it
// when the leader goes silent (see Leader). leaderKeepEvery plus
// leaderPingTimeout is well below leaderSilence: a cut-off leader stops
// leading before the server frees the lock for another.
const (
	leaderKeepEvery   = time.Second
	leaderPingTimeout = 2 * time.Second
	leaderSilence     = 5 * time.Second
)

// Leader returns the store's leader lock (the same one on every call; the
// store's Close releases it).
func (db *DB) Leader() *Leader {
	db.leaderOnce.Do(func() {
		cfg := db.conn.Copy()
		cfg.RuntimeParams["application_name"] = applicationName("hub leader", db.schema)
		// The server's keepalives on this session: a silent peer is found
		// within seconds (a direct connection; idle_session_timeout below
		// covers a proxy too).
		for k, v := range map[string]string{"tcp_keepalives_idle": "2", "tcp_keepalives_interval": "1", "tcp_keepalives_count": "3"} {
			cfg.RuntimeParams[k] = v
		}
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
	if l.held {
		if l.pingLocked(ctx) {
			return true, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, leaderCallTimeout)
	defer cancel()
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
	if !got {
		return false, nil
	}
	// The server ends the holder's session after leaderSilence without
	// a word (PostgreSQL 14 and later; older ones do not know the
	// setting, code 42704, and rely on the keepalives).
	var pe *pgconn.PgError
	if _, err := l.conn.Exec(ctx, fmt.Sprintf(`SET idle_session_timeout = %d`, leaderSilence.Milliseconds())); err != nil && (!errors.As(err, &pe) || pe.Code != "42704") {
		l.dropLocked()
		return false, fmt.Errorf("leader lock: %w", l.db.friendly(err))
	}
	ls := &leaderSession{ended: make(chan struct{})}
	if err := l.conn.QueryRow(ctx, `SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&ls.pid, &ls.start); err != nil {
		l.dropLocked()
		return false, fmt.Errorf("leader lock: %w", l.db.friendly(err))
	}
	l.fence.Store(ls)
	l.db.logger.Info("this replica now runs the orchestrator (took the leader lock)")
	l.held = true
	go l.keepAlive(l.conn, ls.ended)
	return true, nil
}

// notLeading is the Lost of a replica that does not lead.
var notLeading = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Lost returns a channel closed the moment the lock held now is lost (its
// connection failed a ping or closed) or resigned; already closed when
// this replica does not hold it. A tick that began while leading stops
// there: the others may take over within leaderSilence.
func (l *Leader) Lost() <-chan struct{} {
	if ls := l.fence.Load(); ls != nil {
		return ls.ended
	}
	return notLeading
}

// pingLocked checks with a round trip that the held lock's connection is
// alive; if not, it drops it (the lock dies with it) and says so.
func (l *Leader) pingLocked(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, leaderPingTimeout)
	defer cancel()
	err := l.conn.Ping(ctx)
	if err == nil {
		return true
	}
	l.db.logger.Warn("lost the orchestrator leader lock with its connection; another replica may lead now", "err", err)
	l.dropLocked()
	return false
}

// keepAlive pings conn every leaderKeepEvery while it holds the lock,
// until stop is closed (the lock's session ended).
func (l *Leader) keepAlive(conn *pgx.Conn, stop chan struct{}) {
	t := l.db.clock.NewTicker(leaderKeepEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
		}
		l.mu.Lock()
		if l.held && l.conn == conn {
			l.pingLocked(context.Background())
		}
		l.mu.Unlock()
	}
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
	if ls := l.fence.Swap(nil); ls != nil {
		close(ls.ended) // stops keepAlive, tells Lost
	}
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), leaderCallTimeout)
		l.conn.Close(ctx)
		cancel()
	}
	l.conn, l.held = nil, false
}
