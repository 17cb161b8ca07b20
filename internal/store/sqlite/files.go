package sqlite

import (
	"errors"
	"fmt"
	"os"
)

// createPrivate creates path empty with mode 0600 if it does not exist.
// SQLite keeps an existing file's mode and gives its -wal file the
// database file's mode, so creating the database this way keeps both
// private to the hub's user (there is no -shm file: see below).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

// The store's connections open the file through SQLite's unix-excl VFS
// (the vfs parameter of Open's dsn). The first of them takes one POSIX
// write lock on the database file's lock bytes and holds it until the
// last of them closes; every lock between the connections of this process
// (a read's mark in the log, the writer's lock, the checkpointer's) is
// then taken in memory, and the log's index lives in this process's heap
// instead of the -shm file, which is neither created nor read. With
// SQLite's default VFS each of those locks was an fcntl: a quarter of the
// hub's system calls in a fleet of 2,000 agents. A crash loses nothing:
// the index is rebuilt from the -wal file when the database is next
// opened, as after any crash, and a -shm file left by a hub of the default
// VFS is ignored (the next process of the default VFS to open the file,
// the first then, rebuilds it from the -wal file).
//
// The price is that no other process may use the file while the hub runs
// (one hub per data dir already holds hub.lock, and `hubctl backup` makes
// its copy inside the hub): a process of the default VFS holds a read lock
// on the file for as long as it has the log open, so the hub refuses to
// open a file that another process has open (errElsewhere), and another
// process cannot read it while the hub runs ("database is locked").
// Connections of this process opened otherwise must not touch the file:
// SQLite locks a read-only one (mode=ro), or one of the default VFS, with
// fcntl, and POSIX locks belong to the process, so releasing its lock
// would release the store's too.
//
// The readers read pages with pread (their page cache is dropped whenever
// another connection committed), and no mmap_size is set: SQLite also
// unmaps a connection's whole mapping then (pagerBeginReadTransaction), so
// in a fleet of 2,000 agents mmap_size = 256 MiB on the readers turned
// 5,500 preads a second into 1,450 mmap and munmap calls (each munmap a
// TLB shootdown across the hub's threads) and page faults, for no less
// CPU (0.270 → 0.309 cores, one run each) and 3 MiB more file RSS.

// errElsewhere explains why Open found path locked.
func errElsewhere(path string, err error) error {
	return fmt.Errorf("open store %s: %w: another process has the file open, and the hub needs it to itself while it runs: close that process (a sqlite3 shell, a script) and start the hub again", path, err)
}
