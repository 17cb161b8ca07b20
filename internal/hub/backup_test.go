package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

func TestBackup(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	h.agent(t, "alice")
	ctx := context.Background()
	if _, err := h.Backup(ctx, ""); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("no path: err = %v, want EINVALID", err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	n, err := h.Backup(ctx, path)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != n || n == 0 {
		t.Errorf("Backup wrote %d bytes; file: %v, %v", n, fi, err)
	}
	if _, err := h.Backup(ctx, path); hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("existing file: err = %v, want ECONFLICT", err)
	}
	// A store that cannot back up (only the Store interface).
	plain := hub.NewOps(hub.NewCore(struct{ hub.Store }{h.DB}, h.Clock, hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, h.Clock)))
	if _, err := plain.Backup(ctx, filepath.Join(t.TempDir(), "x.db")); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("store without backups: err = %v, want EPRECONDITION", err)
	}
}
