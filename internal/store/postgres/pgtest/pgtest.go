// Package pgtest gives a test a PostgreSQL database or schema of its own on
// the server that HUB_TEST_DATABASE_URL names, and skips the test when the
// variable is not set (scripts/ci-postgres.sh starts a throw-away cluster
// and sets it).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// URL returns HUB_TEST_DATABASE_URL, skipping the test when it is not set.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("HUB_TEST_DATABASE_URL")
	if u == "" {
		tb.Skip("HUB_TEST_DATABASE_URL is not set: skipping a PostgreSQL test (scripts/ci-postgres.sh starts a throw-away cluster)")
	}
	return u
}

// Conn connects to the test database as the test's own role; the caller
// closes it.
func Conn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), URL(tb))
	if err != nil {
		tb.Fatalf("connect to the test database: %v", err)
	}
	return conn
}

// Exec runs statements on the test database as the test's own role.
func Exec(tb testing.TB, sql ...string) {
	tb.Helper()
	conn := Conn(tb)
	defer conn.Close(context.Background())
	for _, q := range sql {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
}

// name returns a fresh identifier starting with prefix.
func name(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Database creates an empty database, dropped when tb ends, and returns its
// URL.
func Database(tb testing.TB) string {
	tb.Helper()
	u, err := url.Parse(URL(tb))
	if err != nil {
		tb.Fatalf("HUB_TEST_DATABASE_URL: %v", err)
	}
	db := name("hubtest_")
	Exec(tb, `CREATE DATABASE `+db)
	tb.Cleanup(func() { Exec(tb, `DROP DATABASE `+db+` WITH (FORCE)`) })
	u.Path = "/" + db
	return u.String()
}

// Schema creates an empty schema in the test database, dropped when tb
// ends, and returns a URL whose connections use it (search_path).
func Schema(tb testing.TB) string {
	tb.Helper()
	u, err := url.Parse(URL(tb))
	if err != nil {
		tb.Fatalf("HUB_TEST_DATABASE_URL: %v", err)
	}
	schema := name("hubtest_")
	Exec(tb, `CREATE SCHEMA `+schema)
	tb.Cleanup(func() { Exec(tb, `DROP SCHEMA `+schema+` CASCADE`) })
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
