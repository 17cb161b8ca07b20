package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Errors that say the database cannot be used now are outages
// (EUNAVAILABLE, with what the call should do); every other error is
// left as it is.
func TestOutageSortsErrors(t *testing.T) {
	domain := hub.Errorf(hub.ENOTFOUND, "no agent")
	for _, tc := range []struct {
		err    error
		reason string // "" = not an outage
	}{
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, "shutting down"},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, "starting up"},
		{&pgconn.PgError{Code: "08006"}, "connection to the database failed"},
		{&pgconn.PgError{Code: "53300"}, "no connection slot"},
		{fmt.Errorf("begin: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), "connection refused"},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), "connection was closed"},
		{fmt.Errorf("exec: %w", pgconn.ErrConnClosed), "connection was closed"},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, "connection was closed"},
		{&pgconn.PgError{Code: "23505"}, ""},
		{&pgconn.PgError{Code: "40P01"}, ""},
		{domain, ""},
		{context.Canceled, ""},
		{fmt.Errorf("read: %w", context.DeadlineExceeded), ""},
		{errors.New("panic in transaction: boom"), ""},
	} {
		got := outage(tc.err, outageWrite)
		if tc.reason == "" {
			if got != tc.err {
				t.Errorf("outage(%v) = %v, want it unchanged", tc.err, got)
			}
			continue
		}
		if hub.ErrorCode(got) != hub.EUNAVAILABLE || !strings.Contains(hub.ErrorMessage(got), tc.reason) ||
			!strings.Contains(hub.ErrorMessage(got), "nothing was saved") {
			t.Errorf("outage(%v) = %s %q, want %s naming %q", tc.err, hub.ErrorCode(got), hub.ErrorMessage(got), hub.EUNAVAILABLE, tc.reason)
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("outage(%v) lost its cause", tc.err)
		}
		if again := outage(got, outageRead); again != got {
			t.Errorf("outage of an outage changed it: %v", again)
		}
	}
}

// A server that accepts the connection and never answers: connecting
// times out (connect_timeout), an outage too, though the driver reports it
// as a passed deadline.
func TestOutageOfASilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = pgx.Connect(context.Background(), "postgres://hub@"+ln.Addr().String()+"/hub?sslmode=disable&connect_timeout=1")
	if err == nil {
		t.Fatal("connected to a server that never answers")
	}
	if got := outage(err, outageRead); hub.ErrorCode(got) != hub.EUNAVAILABLE || !strings.Contains(hub.ErrorMessage(got), "no answer in time") {
		t.Errorf("outage(%v) = %s %q, want %s: no answer in time", err, hub.ErrorCode(got), hub.ErrorMessage(got), hub.EUNAVAILABLE)
	}
}

// A store whose database cannot be reached answers reads and writes
// EUNAVAILABLE (it used to answer the driver's error, which the API turned
// into Internal, and a token check into "unknown token"), and serves
// again once the database can be reached.
func TestStoreUnreachableIsUnavailable(t *testing.T) {
	u, link := pgtest.Cuttable(t, pgtest.Schema(t))
	db := openTest(t, u)
	ctx := context.Background()
	a := &hub.Agent{Name: "alice", CreatedAt: time.Unix(1, 0)}
	if err := db.Update(ctx, func(tx hub.Tx) error { return tx.CreateAgent(a, []byte("hash-alice")) }); err != nil {
		t.Fatal(err)
	}
	link.Cut()
	for name, call := range map[string]func() error{
		"read": func() error {
			return db.View(ctx, func(tx hub.Tx) error { _, err := tx.AgentByTokenHash([]byte("hash-alice")); return err })
		},
		"write": func() error {
			return db.Update(ctx, func(tx hub.Tx) error {
				return tx.CreateAgent(&hub.Agent{Name: "bob", CreatedAt: time.Unix(1, 0)}, []byte("hash-bob"))
			})
		},
	} {
		err := call()
		if hub.ErrorCode(err) != hub.EUNAVAILABLE || !strings.Contains(hub.ErrorMessage(err), "cannot reach its database") {
			t.Errorf("%s with the database cut off: %s %q (%v), want %s saying the database cannot be reached", name, hub.ErrorCode(err), hub.ErrorMessage(err), err, hub.EUNAVAILABLE)
		}
		if strings.Contains(hub.ErrorMessage(err), "127.0.0.1") {
			t.Errorf("%s: the client's message names the database server: %q", name, hub.ErrorMessage(err))
		}
	}
	link.Restore()
	var got *hub.Agent
	if err := db.View(ctx, func(tx hub.Tx) (err error) { got, err = tx.AgentByTokenHash([]byte("hash-alice")); return err }); err != nil || got.Name != "alice" {
		t.Fatalf("read after the database came back: %v, %v", got, err)
	}
	if err := db.Update(ctx, func(tx hub.Tx) error {
		return tx.CreateAgent(&hub.Agent{Name: "bob", CreatedAt: time.Unix(1, 0)}, []byte("hash-bob"))
	}); err != nil {
		t.Fatalf("write after the database came back: %v", err)
	}
}
