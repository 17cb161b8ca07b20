package sqlite

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// The writer does not checkpoint on its own: the checkpointer's connection
// does, and the log stays bounded through a long run of commits (about 14
// times the checkpoint threshold) while readers read all along, none of
// them and no write failing with a busy error.
func TestCheckpointerKeepsTheLogBounded(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	db := openDB(t, path)
	var auto int
	if err := db.wc.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Fatalf("the writer's wal_autocheckpoint = %d, want 0 (the checkpointer checkpoints)", auto)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`)
		return err
	})

	const (
		writers   = 4
		perWriter = 150
		bodyBytes = 96 << 10 // 24 pages a row
		pageSize  = 4096
		readers   = 4
		// The checkpointer looks at the log between commits; on a loaded
		// machine its look comes late and the log passes logCapPages by
		// what the writers commit meanwhile (up to 35 MB seen with three
		// copies of this test on two cores). Without checkpoints the log
		// would hold all 56 MiB written.
		logLimitByte = 3 * logCapPages * pageSize
	)
	body := strings.Repeat("x", bodyBytes)
	stopReading := make(chan struct{})
	var reads atomic.Int64
	var wg, rg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-stopReading:
					return
				default:
				}
				err := db.View(ctx, func(tx hub.Tx) error {
					var n int
					return tx.(*Tx).queryRow(`SELECT COUNT(*) FROM filler`).Scan(&n)
				})
				if err != nil {
					errs <- err
					return
				}
				reads.Add(1)
			}
		}()
	}
	var maxLog atomic.Int64
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				err := db.Update(ctx, func(tx hub.Tx) error {
					_, err := tx.(*Tx).exec(`INSERT INTO filler (body) VALUES (?)`, body)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > maxLog.Load() {
					maxLog.Store(fi.Size()) // racy max: only a lower bound, never a false failure
				}
			}
		}()
	}
	wg.Wait()
	close(stopReading)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("read or write failed during the checkpoints: %v", err)
	}
	written := int64(writers * perWriter * bodyBytes)
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d MiB in %d commits, %d reads; largest log seen %d KiB, log at the end %d KiB",
		written>>20, writers*perWriter, reads.Load(), maxLog.Load()>>10, fi.Size()>>10)
	if fi.Size() > logLimitByte || maxLog.Load() > logLimitByte {
		t.Errorf("the log grew to %d bytes (largest seen %d) after %d bytes written: want ≤ %d",
			fi.Size(), maxLog.Load(), written, logLimitByte)
	}
	if st := db.Checkpoints(); st.Runs == 0 {
		t.Errorf("Checkpoints() = %+v after %d bytes written: no checkpoint ran", st, written)
	}
	var n int
	mustView(t, db, func(tx hub.Tx) error {
		return tx.(*Tx).queryRow(`SELECT COUNT(*) FROM filler`).Scan(&n)
	})
	if n != writers*perWriter {
		t.Errorf("%d rows after %d writes", n, writers*perWriter)
	}
}

// The writer keeps its statement journal (what a savepoint rolls back) in
// memory, not in a temporary file.
func TestWriterJournalsInMemory(t *testing.T) {
	db := openDB(t, tempPath(t))
	var temp int
	if err := db.wc.QueryRowContext(context.Background(), `PRAGMA temp_store`).Scan(&temp); err != nil {
		t.Fatal(err)
	}
	if temp != 2 {
		t.Errorf("the writer's temp_store = %d, want 2 (memory)", temp)
	}
}
