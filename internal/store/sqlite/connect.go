package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/mattn/go-sqlite3"
)

// Each of the store's connections is opened by a connector that sets its
// pragmas as it connects: the memory map for the readers and the writer,
// and the writer's own (writerHook).

// The readers and the writer read the database file through a memory map
// (PRAGMA mmap_size) rather than with a pread system call per page: SQLite
// empties a connection's page cache whenever another connection has
// committed, so in a busy hub nearly every read transaction read its pages
// again (a fleet of 2,000 agents: 1.5 preads per network read, about a
// fifth of the hub's system calls; on this kind of VM every system call is
// dear). Pages still in the write-ahead log are read with pread as before;
// writes are never made through the map.
//
// The trade-offs:
//   - An I/O error while SQLite reads a mapped page (a failing disk, the
//     file truncated by another program, a network file system losing
//     its server) is a SIGBUS, which crashes the hub, where pread would
//     have returned an error for that one read. The data dir is meant to
//     be a local disk of the hub's own (docs/operations.md).
//   - Each connection maps the file apart: up to mmapSize of address space
//     per connection (readers + writer), and the pages it has touched count
//     in the hub's RSS (they are the page cache's, shared, and reclaimed
//     under memory pressure like any file page). Past mmapSize the rest of
//     the file is read with pread.
//   - A 32-bit build has no address space to spare: it keeps pread.
//     Windows maps too (SQLite unmaps before it truncates the file).
//
// The checkpointer's connection keeps pread: it reads the log and writes
// the file, which the map does not serve.

// mmapSize is the most of the database file a connection maps: 256 MiB,
// the file of a hub of 10,000 agents with weeks of messages (a fleet of
// 2,000 grows it by ~150 MiB an hour with a retention of hours).
const mmapSize = 256 << 20

// mapSize is the mmap_size of the store's connections: mmapSize, no more
// than the file may grow to (maxSize, 0 for no cap), and 0 (no map) on a
// 32-bit build.
func mapSize(maxSize int64) int64 {
	if strconv.IntSize < 64 {
		return 0
	}
	if maxSize > 0 && maxSize < mmapSize {
		return maxSize
	}
	return mmapSize
}

// connector opens connections to dsn and sets each one's mmap_size, then
// runs hook (if any) on it.
type connector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
}

func newConnector(dsn string, mmap int64, hook func(*sqlite3.SQLiteConn) error) *connector {
	return &connector{dsn: dsn, driver: &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		if _, err := conn.Exec(fmt.Sprintf(`PRAGMA mmap_size = %d`, mmap), nil); err != nil {
			return fmt.Errorf("set mmap_size: %w", err)
		}
		if hook != nil {
			return hook(conn)
		}
		return nil
	}}}
}

// Connect implements driver.Connector.
func (c *connector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }

// Driver implements driver.Connector.
func (c *connector) Driver() driver.Driver { return c.driver }

// The writer keeps its statement journal in memory (PRAGMA temp_store =
// MEMORY). Each write of a batch runs in a savepoint (commit in
// sqlite.go), and SQLite copies every page a savepoint changes, before
// changing it, into that journal, to roll the savepoint back if asked. The
// journal was a temporary file once it passed 64 KiB (16 pages, which a
// channel post's deliveries and counters pass): two pwrites a page, about
// half of the hub's pwrites in a fleet of 1,000 agents. In memory it is
// emptied when each savepoint is released, so it holds one write's
// pages at most. Temporary tables and sorts of the writer's statements are
// in memory too: the writer sorts nothing large.

// writerHook prepares the writer's connection: its statement journal in
// memory, the automatic checkpoint turned off (the checkpointer does it,
// checkpoint.go) and the function the addressee cache's triggers call
// (addressees.go).
func writerHook(names *addressees) func(*sqlite3.SQLiteConn) error {
	return func(conn *sqlite3.SQLiteConn) error {
		for _, q := range []string{`PRAGMA temp_store = MEMORY`, `PRAGMA wal_autocheckpoint = 0`} {
			if _, err := conn.Exec(q, nil); err != nil {
				return err
			}
		}
		return names.connect(conn)
	}
}
