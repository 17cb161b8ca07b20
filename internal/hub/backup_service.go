package hub

import (
	"context"
	"path/filepath"
)

// Ops is the service of the operator's upkeep: backups and message
// retention.
type Ops struct {
	*core
	store    txs[opsTx] // the store methods it uses
	backuper Backuper   // nil: the store cannot back up
}

// opsTx is what the ops service reads and writes in one transaction:
// the store methods it uses, by their group.
type opsTx interface {
	RetentionTx
}

// NewOps returns the upkeep service.
func NewOps(c *Core) *Ops {
	b, _ := c.store.Store.(Backuper)
	return &Ops{core: c.core, store: txsOf[opsTx](c.store), backuper: b}
}

// Backuper is a Store that can write a consistent copy of itself to a new
// file (internal/store/sqlite does). Errors: ECONFLICT if the file exists.
type Backuper interface {
	Backup(ctx context.Context, path string) (int64, error)
}

// Backup writes a consistent copy of the store to path, a new file on the
// hub's machine, and returns its size. Errors: EINVALID (no or a relative path),
// ECONFLICT (the file exists), EPRECONDITION (the store cannot back up).
func (s *Ops) Backup(ctx context.Context, path string) (int64, error) {
	if path == "" {
		return 0, Errorf(EINVALID, "path is required: the file to write the backup to, on the hub's machine")
	}
	if !filepath.IsAbs(path) {
		return 0, Errorf(EINVALID, "path %q is relative: give an absolute path on the hub's machine (hubctl backup makes a relative path absolute against its own directory)", path)
	}
	b := s.backuper
	if b == nil {
		return 0, Errorf(EPRECONDITION, "this hub's store does not support backups")
	}
	return b.Backup(ctx, path)
}
