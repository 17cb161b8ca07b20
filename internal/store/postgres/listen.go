package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Watch reports the posts that any replica commits, until ctx ends. It
// LISTENs on one dedicated connection (not from the pool) and calls posted
// for each notification; the payload is the newest message ID only, never
// the message, and posted is expected to be cheap and to coalesce
// (hub.Service.Poke). When the connection drops, Watch reconnects with a
// growing pause (up to 5 s), says so in the log, and calls resync once
// listening again: the notifications sent meanwhile are lost, so every
// parked wait must look again (hub.Service.RecheckWaits). It also calls
// posted after the first LISTEN, for the posts committed before it.
func (db *DB) Watch(ctx context.Context, posted func(), resync func() int) error {
	cfg := db.conn.Copy()
	cfg.RuntimeParams["application_name"] = applicationName("hub listen", db.schema)
	pause, connected := 100*time.Millisecond, false
	for {
		conn, err := db.listenConn(ctx, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			db.logger.Warn("cannot listen for other replicas' posts; retrying (parked waits still poll)", "err", err, "retry_in", pause)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
			continue
		}
		pause = 100 * time.Millisecond
		if connected {
			n := resync()
			db.logger.Info("listening for other replicas' posts again; re-checked every parked wait", "agents", n)
		}
		connected = true
		posted()
		err = db.listen(ctx, conn, posted)
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return nil
		}
		db.logger.Warn("lost the connection that listens for other replicas' posts; reconnecting", "err", err)
	}
}

// listenConn opens a connection and LISTENs on the posts channel.
func (db *DB) listenConn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(cfg, err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("listen: %w", db.friendly(err))
	}
	return conn, nil
}

// listen calls posted for each notification until the connection fails
// or ctx ends.
func (db *DB) listen(ctx context.Context, conn *pgx.Conn, posted func()) error {
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		posted()
	}
}

// applicationName names a dedicated connection in pg_stat_activity (at
// most 63 bytes, PostgreSQL's limit).
func applicationName(what, schema string) string {
	s := what + " " + schema
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}
