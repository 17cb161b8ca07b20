package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storetest"
	"github.com/jackc/pgx/v5"
)

// testURL returns the URL of the test database (HUB_TEST_DATABASE_URL),
// skipping the test when none is set.
func testURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("HUB_TEST_DATABASE_URL")
	if u == "" {
		tb.Skip("HUB_TEST_DATABASE_URL is not set: skipping the PostgreSQL tests (scripts/ci-postgres.sh starts a throw-away cluster)")
	}
	return u
}

// freshSchema creates an empty schema in the test database, dropped when
// tb ends, and returns a URL whose connections use it.
func freshSchema(tb testing.TB) string {
	tb.Helper()
	base := testURL(tb)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "hubtest_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("connect to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withParam(tb, base, "search_path", schema)
}

// withParam returns the URL u with one more query parameter.
func withParam(tb testing.TB, u, key, value string) string {
	tb.Helper()
	if !strings.Contains(u, "://") {
		return u + " " + key + "=" + value // key=value form
	}
	p, err := url.Parse(u)
	if err != nil {
		tb.Fatalf("HUB_TEST_DATABASE_URL: %v", err)
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
}

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
	testURL(t)
	storetest.Run(t, func(tb testing.TB) func() hub.Store {
		u := freshSchema(tb)
		return func() hub.Store { return openTest(tb, u) }
	})
}
