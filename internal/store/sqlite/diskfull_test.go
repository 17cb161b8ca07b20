package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// A full database (here at its size limit, as on a full file system)
// answers writes EUNAVAILABLE "disk full", reports DiskFull, keeps serving
// reads, and recovers by itself once there is room again.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hub.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{MaxSize: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := hub.NewServices(hub.NewCore(db, hub.NewFakeClock(time.Unix(1_700_000_000, 0)), hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, hub.NewFakeClock(time.Unix(1_700_000_000, 0)))))
	if err := svc.Init(ctx); err != nil {
		t.Fatal(err)
	}
	a, _, err := svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("z", 32<<10)
	var fullErr error
	for i := 0; i < 100 && fullErr == nil; i++ {
		_, fullErr = svc.Messages.Post(ctx, a, "", hub.PostRequest{To: []string{"alice"}, Body: body})
	}
	if hub.ErrorCode(fullErr) != hub.EUNAVAILABLE || !strings.Contains(hub.ErrorMessage(fullErr), "disk full") {
		t.Fatalf("post into a full database: %v, want EUNAVAILABLE saying disk full", fullErr)
	}
	if !db.DiskFull() {
		t.Error("DiskFull is false after a write failed for want of space")
	}
	if _, _, _, err := svc.Messages.List(ctx, a, hub.ListRequest{}); err != nil {
		t.Errorf("read while the disk is full: %v", err)
	}
	// Space returns: another process deletes old messages.
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM deliveries`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM messages`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Messages.Post(ctx, a, "", hub.PostRequest{To: []string{"alice"}, Body: "room again"}); err != nil {
		t.Fatalf("post after space returned: %v", err)
	}
	if db.DiskFull() {
		t.Error("DiskFull still true after a write committed")
	}
}
