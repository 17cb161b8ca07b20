package postgres

import (
	"context"
	"log/slog"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/agenthub/hub/internal/store/storetest"
)

// openTest opens the store at u and closes it when tb ends.
func openTest(tb testing.TB, u string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), u, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// The store conformance suite, each test in a fresh schema.
func TestStore(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, func(tb testing.TB) func() hub.Store {
		u := pgtest.Schema(tb)
		return func() hub.Store { return openTest(tb, u) }
	})
}
