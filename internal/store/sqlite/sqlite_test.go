package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// t0 is the time the store tests write; any fixed instant will do.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)

// tempPath returns a database path in a fresh temporary directory.
func tempPath(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(tb.TempDir(), "hub.db")
}

// openDB opens the store at path and closes it when the test ends.
func openDB(tb testing.TB, path string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return db
}

// newDB opens a store on a fresh temporary file.
func newDB(tb testing.TB) *DB {
	tb.Helper()
	return openDB(tb, tempPath(tb))
}

// mustUpdate runs fn in a write transaction and fails the test on error.
func mustUpdate(tb testing.TB, db *DB, fn func(tx hub.Tx) error) {
	tb.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

// mustView runs fn in a read transaction and fails the test on error.
func mustView(tb testing.TB, db *DB, fn func(tx hub.Tx) error) {
	tb.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

// createAgent inserts an agent named name with a token hash derived from it.
func createAgent(tb testing.TB, db *DB, name string) *hub.Agent {
	tb.Helper()
	a := &hub.Agent{Name: name, CreatedAt: t0}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.CreateAgent(a, hub.HashToken("token-"+name)) })
	if a.ID == 0 {
		tb.Fatalf("CreateAgent(%s) left ID 0", name)
	}
	return a
}

// agentNames lists every agent's name (disabled included).
func agentNames(tb testing.TB, db *DB) []string {
	tb.Helper()
	var names []string
	mustView(tb, db, func(tx hub.Tx) error {
		as, err := tx.ListAgents(true)
		for _, a := range as {
			names = append(names, a.Name)
		}
		return err
	})
	return names
}

// rawDB opens a plain database/sql handle on the file, for checks below the
// store's API.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	r, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// embeddedMigrations returns the number of the newest migration file and
// how many there are.
func embeddedMigrations(tb testing.TB) (newest, count int) {
	tb.Helper()
	ms, err := migrations()
	if err != nil {
		tb.Fatalf("migrations: %v", err)
	}
	if len(ms) == 0 {
		tb.Fatal("no embedded migrations")
	}
	return ms[len(ms)-1].Version, len(ms)
}

// blockWriter parks the writer inside a transaction until the returned
// release function is called, so that the writes issued meanwhile queue up
// and are committed together.
func blockWriter(tb testing.TB, db *DB) (release func(), done <-chan error) {
	tb.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.Update(context.Background(), func(tx hub.Tx) error {
			close(entered)
			<-gate
			return nil
		})
	}()
	<-entered
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	tb.Cleanup(release)
	return release, errc
}

// waitQueued waits until n write requests are queued behind the writer.
func waitQueued(tb testing.TB, db *DB, n int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for db.QueuedWrites() < n {
		if time.Now().After(deadline) {
			tb.Fatalf("queued writes = %d, want %d", db.QueuedWrites(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestOpenMigrates(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	newest, count := embeddedMigrations(t)

	db := openDB(t, path)
	if got := db.SchemaVersion(); got != newest {
		t.Errorf("SchemaVersion() = %d, want %d", got, newest)
	}
	if got := db.Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	raw := rawDB(t, path)
	for _, table := range []string{"agents", "messages", "deliveries", "channels", "channel_members", "meta", "schema_migrations"} {
		var n int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: found %d, want 1", table, n)
		}
	}
	var mode string
	if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	createAgent(t, db, "alice")
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Reopening applies nothing twice and keeps the data.
	for i := range 2 {
		db := openDB(t, path)
		if got := db.SchemaVersion(); got != newest {
			t.Errorf("reopen %d: SchemaVersion() = %d, want %d", i, got, newest)
		}
		var rows int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != count {
			t.Errorf("reopen %d: schema_migrations has %d rows, want %d", i, rows, count)
		}
		if got, want := agentNames(t, db), []string{"alice"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("reopen %d: agents = %v, want %v", i, got, want)
		}
		db.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	openDB(t, path).Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := Open(context.Background(), path, Options{})
	if err == nil {
		db.Close()
		t.Fatal("Open of a database from a newer hub succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "9999") || !strings.Contains(err.Error(), "newer hub") {
		t.Errorf("Open error = %q, want it to name version 9999 and ask for a newer hub", err)
	}
}

func TestOpenOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sync    string
		wantErr bool
	}{
		{"", false},
		{"normal", false},
		{"FULL", false},
		{"fast", true},
		{"1; DROP TABLE agents", true},
	}
	for _, tt := range tests {
		t.Run(tt.sync, func(t *testing.T) {
			t.Parallel()
			db, err := Open(context.Background(), tempPath(t), Options{Synchronous: tt.sync})
			if err == nil {
				db.Close()
			}
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Errorf("Open(Synchronous %q) error = %v, want error: %v", tt.sync, err, tt.wantErr)
			}
		})
	}
}

// The file is created where the path says, whatever characters the data
// dir's name holds (SQLite reads '?', '#' and '%' specially in its URIs).
func TestOpenOddPaths(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"a/b c", "hub#1", "100%25", "what?", "é&=;"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), dir, "hub.db")
			db := openDB(t, path)
			createAgent(t, db, "alice")
			db.Close()
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("database file: %v", err)
			}
			if got := agentNames(t, openDB(t, path)); len(got) != 1 {
				t.Errorf("agents after reopening %s = %v, want [alice]", path, got)
			}
		})
	}
}

var errBoom = errors.New("boom")

// Group commit: writes issued together share a commit, each in its own
// savepoint: an error or a panic in one rolls back only that one.
func TestUpdateGroupCommit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	release, blocked := blockWriter(t, db)

	const n = 200
	fails := func(i int) bool { return i%10 == 3 }
	const panics = 7
	var sawOthers atomic.Bool // some fn saw another pending fn's write: they shared a transaction
	var returned [n]atomic.Bool
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx hub.Tx) error {
				name := fmt.Sprintf("agent-%03d", i)
				if err := tx.CreateAgent(&hub.Agent{Name: name, CreatedAt: t0}, hub.HashToken(name)); err != nil {
					return err
				}
				as, err := tx.ListAgents(true)
				if err != nil {
					return err
				}
				for _, a := range as {
					var j int
					if _, err := fmt.Sscanf(a.Name, "agent-%03d", &j); err != nil {
						return fmt.Errorf("unexpected agent %q", a.Name)
					}
					if j == i {
						continue
					}
					if fails(j) || j == panics {
						return fmt.Errorf("agent %s is visible after its write was rolled back", a.Name)
					}
					if !returned[j].Load() {
						sawOthers.Store(true)
					}
				}
				switch {
				case i == panics:
					panic("bad write")
				case fails(i):
					return fmt.Errorf("write %d: %w", i, errBoom)
				}
				return nil
			})
			returned[i].Store(true)
		})
	}
	waitQueued(t, db, n)
	release()
	wg.Wait()
	if err := <-blocked; err != nil {
		t.Fatalf("blocking write: %v", err)
	}

	if !sawOthers.Load() {
		t.Error("no write saw another pending write: the writes were not grouped into one transaction")
	}
	want := map[string]bool{}
	for i := range n {
		switch {
		case i == panics:
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "panic") {
				t.Errorf("write %d (panics): error = %v, want a panic error", i, errs[i])
			}
		case fails(i):
			if !errors.Is(errs[i], errBoom) {
				t.Errorf("write %d (fails): error = %v, want %v", i, errs[i], errBoom)
			}
		default:
			if errs[i] != nil {
				t.Errorf("write %d: error = %v, want nil", i, errs[i])
			}
			want[fmt.Sprintf("agent-%03d", i)] = true
		}
	}
	got := agentNames(t, db)
	if len(got) != len(want) {
		t.Errorf("committed %d agents, want %d", len(got), len(want))
	}
	for _, name := range got {
		if !want[name] {
			t.Errorf("agent %s committed, want it rolled back", name)
		}
	}

	// The writer survived the panic.
	createAgent(t, db, "after-panic")
}

func TestUpdateContextCancelledWhileQueued(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	release, blocked := blockWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- db.Update(ctx, func(tx hub.Tx) error { ran.Store(true); return nil })
	}()
	waitQueued(t, db, 1)
	cancel()
	release()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context = %v, want %v", err, context.Canceled)
	}
	if ran.Load() {
		t.Error("the cancelled write's fn ran")
	}
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
}

func TestCloseWaitsForPendingWrites(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	db := openDB(t, path)
	release, blocked := blockWriter(t, db)

	const n = 50
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx hub.Tx) error {
				name := fmt.Sprintf("agent-%02d", i)
				return tx.CreateAgent(&hub.Agent{Name: name, CreatedAt: t0}, hub.HashToken(name))
			})
		})
	}
	waitQueued(t, db, n)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while writes were pending", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("pending write %d: %v", i, err)
		}
	}
	err := db.Update(context.Background(), func(tx hub.Tx) error { return nil })
	if got, want := hub.ErrorCode(err), hub.EUNAVAILABLE; got != want {
		t.Errorf("Update after Close: code %q (%v), want %q", got, err, want)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	if got := len(agentNames(t, openDB(t, path))); got != n {
		t.Errorf("after reopen: %d agents, want %d", got, n)
	}
}

// A read transaction whose context can end starts no goroutine to watch
// it (database/sql's and the driver's, one per transaction and statement);
// a context that ended keeps it from beginning.
func TestViewStartsNoGoroutineForItsContext(t *testing.T) {
	db := newDB(t)
	mustView(t, db, func(tx hub.Tx) error { _, err := tx.MaxMessageID(); return err }) // a pooled connection
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := runtime.NumGoroutine()
	var during int
	if err := db.View(ctx, func(tx hub.Tx) error {
		if _, err := tx.MaxMessageID(); err != nil {
			return err
		}
		during = runtime.NumGoroutine()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if during != before {
		t.Errorf("%d goroutines during a read, %d before: the read started %d", during, before, during-before)
	}
	cancel()
	ran := false
	if err := db.View(ctx, func(hub.Tx) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("View with an ended context: ran %v, err %v, want not run and context.Canceled", ran, err)
	}
}
