package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// freshRole creates a login role without rights (dropped when tb ends)
// and returns its name and the URL u with the role as user.
func freshRole(tb testing.TB, u string) (role, ru string) {
	tb.Helper()
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		tb.Fatal(err)
	}
	role = "r" + cfg.RuntimeParams["search_path"]
	pgtest.Exec(tb, `CREATE ROLE `+role+` LOGIN`)
	tb.Cleanup(func() { pgtest.Exec(tb, `DROP OWNED BY `+role+` CASCADE`, `DROP ROLE `+role) })
	p, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	p.User = url.User(role)
	return role, p.String()
}

// freePort returns a loopback port nothing listens on.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Open says what is wrong — the URL, the server, the database, the role's
// rights — never with the password, never with a stack of driver text.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	schema := cfg.RuntimeParams["search_path"]
	role, weak := freshRole(t, u)
	pgtest.Exec(t, `GRANT USAGE ON SCHEMA `+schema+` TO `+role)

	tests := []struct {
		name string
		url  string
		want []string
	}{
		{"not a URL", "postgres://u:s3cret@[::1", []string{"database URL is not valid", "postgres://USER:PASSWORD@HOST:PORT/DATABASE"}},
		{"bad port", "postgres://u:s3cret@localhost:notaport/db", []string{"database URL is not valid"}},
		{"server down", fmt.Sprintf("postgres://u:s3cret@127.0.0.1:%d/db?connect_timeout=5", freePort(t)), []string{"connection refused", "is the server running"}},
		{"no such database", fmt.Sprintf("postgres://%s@%s:%d/nosuchdb_%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, schema), []string{"nosuchdb", "does not exist", "createdb"}},
		{"role without rights", weak, []string{"may not create", "grant it CREATE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(context.Background(), tt.url, Options{Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded, want an error")
			}
			t.Logf("Open: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// A database migrated by a newer hub is refused with a clear message.
func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	openTest(t, u).Close()
	cfg, _ := pgx.ParseConfig(u)
	pgtest.Exec(t, `INSERT INTO `+cfg.RuntimeParams["search_path"]+`.schema_migrations (version, name) VALUES (9999, '9999_future.sql')`)
	db, err := Open(context.Background(), u, Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		db.Close()
		t.Fatal("Open of a database from a newer hub succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "9999") || !strings.Contains(err.Error(), "newer hub") {
		t.Errorf("Open error = %q, want it to name version 9999 and ask for a newer hub", err)
	}
}

// Replicas that open a fresh database together apply each migration once
// (the advisory lock), and a replica whose role may not create tables
// starts on a database that is already migrated.
func TestOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			db, err := Open(context.Background(), u, Options{Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
	db := openTest(t, u)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var rows, newest int
	if err := db.pool.QueryRow(context.Background(), `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &newest); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || newest != ms[len(ms)-1].Version || db.SchemaVersion() != newest {
		t.Errorf("schema_migrations: %d rows up to %d, SchemaVersion %d; want %d rows up to %d", rows, newest, db.SchemaVersion(), len(ms), ms[len(ms)-1].Version)
	}

	role, ru := freshRole(t, u)
	schema := db.schema
	pgtest.Exec(t, `GRANT USAGE ON SCHEMA `+schema+` TO `+role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA `+schema+` TO `+role)
	rdb, err := Open(context.Background(), ru, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Open with a role that may only read and write: %v", err)
	}
	rdb.Close()
}
