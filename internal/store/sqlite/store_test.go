package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storetest"
)

// The store conformance suite, on a fresh file per test.
func TestStore(t *testing.T) {
	storetest.Run(t, freshFile)
}

// freshFile is storetest's NewDB: a fresh file per test.
func freshFile(tb testing.TB) func() hub.Store {
	path := filepath.Join(tb.TempDir(), "hub.db")
	return func() hub.Store {
		db, err := Open(context.Background(), path, Options{})
		if err != nil {
			tb.Fatalf("Open(%s): %v", path, err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	}
}
