package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/jackc/pgx/v5"
)

// Reports are what Watch calls when other replicas (or this one) change
// something that a replica keeps in memory.
type Reports struct {
	// PostedTo is called for each commit of posts whose notification
	// names their recipients (hub.Service.PostedTo); it must not block.
	PostedTo func(first, last int64, agentIDs []int64)
	// Posted is called for posts committed whose recipients are not
	// known: the notification could not hold them, or some may have been
	// missed. It is expected to be cheap and to coalesce (hub.Service.Poke).
	Posted func()
	// Resync is called after a reconnect: the notifications sent meanwhile
	// are lost, so every parked wait must look again
	// (hub.Service.RecheckWaits). It returns how many agents' waits it woke.
	Resync func() int
	// AgentChanged is called when an agent's token or state changed
	// (hub.Service.AgentChanged).
	AgentChanged func(id int64, change hub.AgentChange)
	// PersonRevoked, if set, is called with the name of a person revoked
	// on any replica (hub.People.PersonRevoked).
	PersonRevoked func(name string)
	// ItemsClosed, if set, is called with an inbox item closed (answered,
	// expired, withdrawn) on any replica (hub.Inbox.ItemsClosed). After a
	// reconnect the inbox's poll finds the answers given meanwhile.
	ItemsClosed func(ids ...int64)
	// ForgetAgents is called for a notification of a changed agent it
	// cannot read (hub.Agents.ForgetAgents).
	ForgetAgents func()
	// Listening is called with true once Watch listens (at first and after
	// each reconnect, before Resync), and with false the moment it loses
	// the connection: in between, AgentChanged reports every change to an
	// agent, and outside, changes may be missed (hub.Agents.ListenerConnected).
	Listening func(connected bool)
	// Heard is called whenever the listening connection hears from the
	// server (a notification, the answer to a ping): every notification
	// sent before was delivered (hub.Agents.ListenerHeard).
	Heard func()
	// TasksReady, if set, is called with the project of tasks made ready
	// (hub.Tasks.TasksReady). After a reconnect Resync wakes the parked
	// next_task calls too: they are parked waits.
	TasksReady func(project string)
}

// changeNames are the changes' names in the payload of a changed agent's
// notification; 0 is a change of its profile alone (role, locale, …).
var changeNames = map[hub.AgentChange]string{0: "profile", hub.TokenChanged: "token", hub.AgentDisabled: "disabled", hub.AgentEnabled: "enabled", hub.AgentDeleted: "deleted"}

// Watch reports what any replica commits, until ctx ends. It LISTENs on
// one dedicated connection (not from the pool) to two channels: posts (the
// payload is the messages' IDs and their recipients' agent IDs, never the
// messages: postedPayload) and changed agents ("token:ID", "disabled:ID",
// "enabled:ID", "deleted:ID", "profile:ID"; "person:NAME", a revoked person; and
// "item:ID", a closed inbox item). When the connection drops, Watch says
// so at once (Listening), reconnects with a
// growing pause (up to 5 s), says so in the log, and once listening again
// says so and resyncs, since the notifications sent
// meanwhile are lost. It also reports a post after the first LISTEN, for
// the posts committed before it.
func (db *DB) Watch(ctx context.Context, r Reports) error {
	cfg := db.conn.Copy()
	cfg.RuntimeParams["application_name"] = applicationName("hub listen", db.schema)
	pause, connected := 100*time.Millisecond, false
	for {
		conn, err := db.listenConn(ctx, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			db.logger.Warn("cannot listen for other replicas' changes; retrying (parked waits still poll)", "err", err, "retry_in", pause)
			retry := db.clock.NewTimer(pause)
			select {
			case <-ctx.Done():
				retry.Stop()
				return nil
			case <-retry.C():
			}
			pause = min(2*pause, 5*time.Second)
			continue
		}
		pause = 100 * time.Millisecond
		r.Listening(true)
		if connected {
			n := r.Resync()
			db.logger.Info("listening for other replicas' changes again; forgot the cached agents and re-checked every parked wait", "agents", n)
		}
		connected = true
		r.Posted()
		err = db.listen(ctx, conn, r)
		r.Listening(false) // before the close: a change reported to nobody must not be trusted
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return nil
		}
		db.logger.Warn("lost the connection that listens for other replicas' changes; reconnecting", "err", err)
	}
}

// listenConn opens a connection and LISTENs on the posts, changed agents
// and ready tasks channels.
func (db *DB) listenConn(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(cfg, err)
	}
	for _, ch := range []string{db.channel, db.changed, db.tasks} {
		if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("listen: %w", db.friendly(err))
		}
	}
	return conn, nil
}

// A listening connection that has heard nothing for listenQuiet is
// pinged: one that gets no answer within listenPingTimeout is given up and
// Watch connects again. A connection gone silent (a partition, a proxy
// that keeps its side open) would otherwise hold back the notifications
// sent meanwhile until TCP delivers them, seconds after the network came
// back, or never tell that some were lost. listenQuiet is well within the
// lease the hub gives each answer (Heard; hub's listenerLease, 2 s), so a
// quiet but live connection keeps its agents cached.
const (
	listenQuiet       = time.Second
	listenPingTimeout = 2 * time.Second
)

// listen reports each notification until the connection fails or ctx ends.
func (db *DB) listen(ctx context.Context, conn *pgx.Conn, r Reports) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, listenQuiet)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				r.Heard()
				continue // quiet, but alive
			}
			return fmt.Errorf("no answer to a ping after %v without a notification: %w", listenQuiet, err)
		}
		if err != nil {
			return err
		}
		r.Heard()
		if n.Channel == db.tasks {
			if r.TasksReady != nil {
				r.TasksReady(n.Payload)
			}
			continue
		}
		if n.Channel != db.changed {
			if first, last, agents, ok := parsePosted(n.Payload); ok {
				r.PostedTo(first, last, agents)
			} else {
				r.Posted()
			}
			continue
		}
		if idText, ok := strings.CutPrefix(n.Payload, itemClosed+":"); ok {
			if id, err := strconv.ParseInt(idText, 10, 64); err == nil && r.ItemsClosed != nil {
				r.ItemsClosed(id)
			}
			continue
		}
		if name, ok := strings.CutPrefix(n.Payload, personRevoked+":"); ok {
			if r.PersonRevoked != nil {
				r.PersonRevoked(name)
			}
			continue
		}
		if id, change, ok := parseChange(n.Payload); ok {
			r.AgentChanged(id, change)
		} else {
			r.ForgetAgents() // unreadable: forget everything, to be safe
		}
	}
}

// parseChange reads the payload of a changed agent's notification.
func parseChange(payload string) (int64, hub.AgentChange, bool) {
	name, idText, _ := strings.Cut(payload, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	for change, n := range changeNames {
		if n == name && err == nil {
			return id, change, true
		}
	}
	return 0, 0, false
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
