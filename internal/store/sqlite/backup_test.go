package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// TestBackupWhileWriting: writes go on, and commit, while VACUUM INTO copies
// a database large enough for the copy to take a while; the copy is a
// sound, complete database holding everything committed before it began,
// and a store opens it.
func TestBackupWhileWriting(t *testing.T) {
	path := tempPath(t)
	db := openDB(t, path)
	ctx := context.Background()
	// ~48 MiB of filler, so that the copy is not instantaneous.
	raw := rawDB(t, path)
	if _, err := raw.Exec(`CREATE TABLE backup_filler (b BLOB);
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 48)
		INSERT INTO backup_filler SELECT randomblob(1 << 20) FROM c`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for i := range 20 {
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.SetMeta(fmt.Sprintf("before-%d", i), "x") })
	}

	var during atomic.Int64 // writes that committed while the backup ran
	var running atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var n atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.Update(ctx, func(tx hub.Tx) error { return tx.SetMeta(fmt.Sprintf("during-%d-%d", w, i), "x") }); err != nil {
					t.Error(err)
					return
				}
				n.Add(1)
				if running.Load() {
					during.Add(1)
				}
			}
		}()
	}
	out := filepath.Join(t.TempDir(), "backup.db")
	running.Store(true)
	size, err := db.Backup(ctx, out)
	running.Store(false)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() != size || size < 48<<20 {
		t.Fatalf("backup file: %v, size %d (reported %d), want ≥ 48 MiB", err, fi.Size(), size)
	}
	// A backup that held the writer would let through at most the one
	// write each writer had queued, as it released the connection.
	if during.Load() < 50 {
		t.Errorf("only %d writes committed while the backup ran (%d in all): the backup blocks the writer", during.Load(), n.Load())
	}
	t.Logf("%d writes committed during a %d MiB backup", during.Load(), size>>20)

	// The copy is sound and complete, and a store opens it as its database.
	check := rawDB(t, out)
	var res string
	if err := check.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of the backup: %q, %v", res, err)
	}
	check.Close()
	if _, err := os.Stat(out + "-wal"); err == nil {
		if fi, _ := os.Stat(out + "-wal"); fi.Size() > 0 {
			t.Errorf("the backup left a non-empty WAL beside it: it must be one self-contained file")
		}
	}
	restored := openDB(t, out)
	mustView(t, restored, func(tx hub.Tx) error {
		for i := range 20 {
			v, err := tx.Meta(fmt.Sprintf("before-%d", i))
			if err != nil {
				return err
			}
			if v != "x" {
				t.Errorf("write before-%d, committed before the backup, is not in it", i)
			}
		}
		return nil
	})
}

func TestBackupRefusesExistingFile(t *testing.T) {
	db := newDB(t)
	out := filepath.Join(t.TempDir(), "exists.db")
	if err := os.WriteFile(out, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := db.Backup(context.Background(), out)
	if hub.ErrorCode(err) != hub.ECONFLICT {
		t.Fatalf("backup onto an existing file: %v, want ECONFLICT", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Fatal("the existing file was changed")
	}
	if _, err := db.Backup(context.Background(), filepath.Join(t.TempDir(), "no", "such", "dir", "b.db")); err == nil {
		t.Fatal("backup into a missing directory succeeded")
	}
}
