package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/mattn/go-sqlite3"
)

// The write-ahead log is copied into the database file (a checkpoint) by a
// goroutine on its own connection, not by the writer. SQLite's automatic
// checkpoint runs inside the commit that takes the log past 1,000 pages, so
// the write that happened to cross the line (at 10,000 due agents, about
// half of an orchestrator tick's commit time) paid for copying everybody's
// pages, and every write queued behind it waited. The writer connection has
// wal_autocheckpoint=0; after each commit it pokes the checkpointer, which
// reads the log's size (a NOOP checkpoint: no lock, no I/O) and, past
// checkpointPages frames not yet copied, runs a PASSIVE checkpoint: it
// copies what no reader still needs and never blocks the writer or a
// reader. Durability does not depend on it: a committed transaction is in
// the log, and SQLite replays the log when the database is opened.
//
// The log starts again from its beginning only when a write begins with
// every frame copied; a writer that commits while each passive checkpoint
// runs could keep it growing. Past logCapPages frames the checkpointer
// therefore asks the writer to checkpoint once itself, between two commits
// (as SQLite's automatic checkpoint would): nothing is appended meanwhile,
// so it catches up, and the next write starts the log again.

// checkpointPages is how many log frames not yet copied start a
// checkpoint: SQLite's own automatic checkpoint threshold.
const checkpointPages = 1000

// logCapPages is the log's size, in frames, past which a checkpoint makes
// the next write start the log again.
const logCapPages = 4 * checkpointPages

// restartWait is how long catchUp's RESTART checkpoint waits for the reads
// that hold a mark in the log: those that began while it copied, which
// take milliseconds unless one is long (a backup), whose end the writer
// should not wait for.
const restartWait = 100 * time.Millisecond

// checkpointGap is the least time between two looks at the log's size, so
// that a stream of small commits costs at most 40 looks a second (at 5 ms,
// up to 200: 0.7 % of the hub's CPU in a fleet of 2,000 agents). What the
// writer commits meanwhile is small beside checkpointPages.
const checkpointGap = 25 * time.Millisecond

// checkpointer runs the checkpoints of one database.
type checkpointer struct {
	conn  *sql.DB // one read-write connection of its own
	clock hub.Clock
	// busyTimeout is the writer's busy timeout, which catchUp lowers to
	// restartWait for its RESTART checkpoint.
	busyTimeout time.Duration
	poke        chan struct{} // a commit happened (buffered 1: pokes coalesce)
	stop        chan struct{} // closed by close
	done        chan struct{} // closed when the loop has returned

	behind atomic.Bool // the log passed logCapPages: the writer should checkpoint

	runs  atomic.Int64 // checkpoints run, the writer's included
	nanos atomic.Int64 // time spent in them
}

// CheckpointStats counts the checkpoints run: the checkpointer's and, when
// the log passed logCapPages, the writer's (not the NOOP looks at the log's
// size). Under a fast stream of large commits every look can find the log
// past its cap, and then the writer runs them all.
type CheckpointStats struct {
	Runs int64         // checkpoints run
	Time time.Duration // wall time spent in them
}

// Checkpoints returns the counts of the checkpoints run so far.
func (db *DB) Checkpoints() CheckpointStats {
	c := db.ckpt
	return CheckpointStats{Runs: c.runs.Load(), Time: time.Duration(c.nanos.Load())}
}

// startCheckpointer opens the checkpointer's connection with dsn and starts
// its goroutine; busyTimeout is the writer's.
func startCheckpointer(dsn string, busyTimeout time.Duration, clock hub.Clock) (*checkpointer, error) {
	conn, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the checkpointer's connection: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	c := &checkpointer{conn: conn, clock: clock, busyTimeout: busyTimeout, poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

// committed tells the checkpointer that the log grew; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	gap := c.clock.NewTimer(0)
	for {
		select {
		case <-c.stop:
			return
		case <-c.poke:
		}
		// An error (the file gone, a disk error) is the writer's to report
		// on its next commit; the next poke tries again.
		_ = c.run()
		gap.Reset(checkpointGap)
		select {
		case <-c.stop:
			return
		case <-gap.C():
		}
	}
}

// run checkpoints the log if it holds checkpointPages frames or more that
// are not yet in the database file, and restarts it past logCapPages.
func (c *checkpointer) run() error {
	_, frames, copied, err := c.checkpoint("NOOP")
	switch {
	case err != nil:
		return err
	case frames >= logCapPages:
		c.behind.Store(true)
	case frames-copied >= checkpointPages:
		t := c.clock.Now()
		_, _, _, err = c.checkpoint("PASSIVE")
		c.count(t)
	}
	return err
}

// count records a checkpoint begun at t.
func (c *checkpointer) count(t time.Time) {
	c.runs.Add(1)
	c.nanos.Add(int64(c.clock.Now().Sub(t)))
}

// catchUp is called by the writer after a commit: if the log has grown past
// logCapPages, it checkpoints on the writer's connection, before the next
// write can append to the log. The log starts again only if no read holds
// a mark in it when the next write begins, and the reads that begin while
// the checkpoint copies take one (the newest frame's) though the file then
// holds all they need: reads in a tight loop kept the log growing past
// three times logCapPages. So once every frame is copied, a RESTART
// checkpoint waits (restartWait at most) for those reads to end and starts
// the log again itself; the reads that begin meanwhile read the file alone
// and hold no mark. A checkpoint that cannot finish (a reader still needs
// the old frames, or the checkpointer holds the lock) is no error; the
// checkpointer asks again.
func (c *checkpointer) catchUp(ctx context.Context, w *sql.Conn) {
	if !c.behind.CompareAndSwap(true, false) {
		return
	}
	var busy bool
	var frames, copied int
	t := c.clock.Now()
	defer c.count(t)
	if err := w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil || busy || copied < frames {
		return
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, restartWait.Milliseconds())); err != nil {
		return
	}
	w.ExecContext(ctx, `PRAGMA wal_checkpoint(RESTART)`)
	w.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, c.busyTimeout.Milliseconds()))
}

// checkpoint runs PRAGMA wal_checkpoint(mode) and returns its row: whether
// it was kept from finishing, the frames in the log and those copied.
func (c *checkpointer) checkpoint(mode string) (busy bool, frames, copied int, err error) {
	err = c.conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &frames, &copied)
	if err != nil {
		err = fmt.Errorf("checkpoint (%s): %w", mode, err)
	}
	return busy, frames, copied, err
}

// close stops the goroutine and closes its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.conn.Close()
}

// writerConnector opens the writer's connections: dsn's connection with its
// statement journal in memory, the automatic checkpoint turned off (the
// checkpointer does it) and the function the addressee cache's triggers
// call (addressees.go).
//
// The statement journal (PRAGMA temp_store = MEMORY): each write of a
// batch runs in a savepoint (commit in sqlite.go), and SQLite copies each
// page a savepoint changes, before changing it, into that journal, to roll
// the savepoint back if asked. The journal was a temporary file once it
// passed 64 KiB (16 pages, which a channel post's deliveries and counters
// pass): two pwrites a page, more than half of the hub's pwrites in a
// fleet of 2,000 agents. In memory it is emptied as each savepoint is
// released, so it holds one write's pages at most. The writer's temporary
// tables and sorts are in memory too: it sorts nothing large.
type writerConnector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
}

func newWriterConnector(dsn string, names *addressees) *writerConnector {
	return &writerConnector{dsn: dsn, driver: &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		for _, q := range []string{`PRAGMA temp_store = MEMORY`, `PRAGMA wal_autocheckpoint = 0`} {
			if _, err := conn.Exec(q, nil); err != nil {
				return err
			}
		}
		return names.connect(conn)
	}}}
}

// Connect implements driver.Connector.
func (w *writerConnector) Connect(context.Context) (driver.Conn, error) { return w.driver.Open(w.dsn) }

// Driver implements driver.Connector.
func (w *writerConnector) Driver() driver.Driver { return w.driver }
