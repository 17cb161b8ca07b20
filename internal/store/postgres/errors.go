package postgres

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file turns the driver's errors about the connection into messages
// that say what is wrong and what to do, without the driver's internals
// and never with the password.

// parseReason returns why a connection string did not parse, without the
// string itself (it may hold a password).
func parseReason(err error) string {
	msg := err.Error()
	if inner := errors.Unwrap(err); inner != nil {
		msg = inner.Error()
	}
	return msg
}

// connectError explains a failure to reach or log in to the server.
func connectError(cfg *pgx.ConnConfig, err error) error {
	where := fmt.Sprintf("PostgreSQL at %s:%d (database %q, role %q)", cfg.Host, cfg.Port, cfg.Database, cfg.User)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return fmt.Errorf("%s refused the login: %s; check the user and password of the database URL", where, pe.Message)
		case pe.Code == "3D000":
			return fmt.Errorf("%s: %s; create it (createdb) or name an existing database in the URL", where, pe.Message)
		case pe.Code == codeInsufficientPriv || pe.Code == "42P01" || strings.HasPrefix(pe.Code, "42"):
			return fmt.Errorf("%s: %s; the role lacks rights on the database", where, pe.Message)
		default:
			return fmt.Errorf("%s: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused; is the server running, and are the host and port of the database URL right?", where)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("cannot reach %s: no answer in time; is the host right and reachable?", where)
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return fmt.Errorf("cannot reach %s: unknown host %q; check the host of the database URL", where, de.Name)
	}
	return fmt.Errorf("cannot reach %s: %s", where, innermost(err))
}

// innermost returns the message of the deepest wrapped error.
func innermost(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// friendly explains connection failures met after Open (the server went
// away, the role lost its rights) and passes other errors through.
func (db *DB) friendly(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == codeInsufficientPriv {
			return fmt.Errorf("role %q lacks rights: %s", db.conn.User, pe.Message)
		}
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, syscall.ECONNREFUSED) {
		return connectError(db.conn, err)
	}
	return err
}
