package postgres

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/writer"
)

// This file fences the orchestrator's writes (hub.LeaderWork): each runs
// only if, inside its own transaction, this replica's leader session still
// holds the leader lock. The check reads the server's lock table, so it
// holds whatever this replica believes: a tick that began while leading and
// outlived the lock (its connections cut off, a long pause) writes nothing
// once the lock may be another's. The write lock orders the checked writes
// with the new leader's, which all come after it took the lock.

// leaderSession names the session that took the leader lock: its backend
// PID and start time (a PID alone may be reused by a later session). ended
// is closed when this replica drops it (Leader.Lost).
type leaderSession struct {
	pid   int32
	start time.Time
	ended chan struct{}
}

// errNotLeader refuses a fenced write.
var errNotLeader = hub.Errorf(hub.EPRECONDITION, "this replica no longer leads the orchestrator (another replica may): its write was not made")

// runRequest runs one queued write, checking the fence first if it is
// the leader's.
func (t *Tx) runRequest(r *writer.Request) error {
	if hub.IsLeaderWork(r.Ctx) {
		if err := t.fenced(); err != nil {
			return err
		}
	}
	return t.run(r.Fn)
}

// fenced returns errNotLeader unless this replica's leader session holds
// the leader lock now, as the server's lock table says.
func (t *Tx) fenced() error {
	ls := t.db.Leader().fence.Load()
	if ls == nil {
		return errNotLeader
	}
	key := uint64(t.db.leadKey)
	var held bool
	err := t.queryRowAs(sharedSafe, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1 AND l.granted
		AND l.pid = $3 AND a.backend_start = $4)`, int64(key>>32), int64(key&0xffffffff), ls.pid, ls.start).Scan(&held)
	if err != nil {
		return err
	}
	if !held {
		return errNotLeader
	}
	return nil
}
