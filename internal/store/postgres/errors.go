package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/agenthub/hub/internal/hub"
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

// An outage is an error that says the database cannot be used right now
// rather than anything about the call: no connection can be made, a
// connection broke, the server is shutting down, starting up or
// recovering, or it has no connection slot left. The store answers those
// EUNAVAILABLE (gRPC Unavailable, HTTP 503: a client retries), never as
// an internal error, and a caller that checks a token with a read never
// takes one for "unknown token". The error keeps the driver's error in
// its chain for the logs; its message, which the client reads, says
// whether the write may have been saved and never names the server.
type outageError struct {
	domain *hub.Error
	cause  error
}

func (e *outageError) Error() string   { return e.domain.Message + ": " + e.cause.Error() }
func (e *outageError) Unwrap() []error { return []error{e.domain, e.cause} }

// What an outage interrupted, for its message.
const (
	outageRead   = "nothing was read; retry in a moment"
	outageWrite  = "nothing was saved; retry in a moment"
	outageCommit = "the write may or may not have been saved: check before writing it again"
)

// outage returns err as an outage of the kind what if it is one, and err
// otherwise (a domain error, a constraint, a cancelled call).
func outage(err error, what string) error {
	var ce *pgconn.ConnectError
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ce) {
		return err // the call ended (its deadline, unless it passed while connecting: connect_timeout)
	}
	var he *hub.Error
	if errors.As(err, &he) {
		return err
	}
	reason := outageReason(err)
	if reason == "" {
		return err
	}
	return &outageError{domain: hub.Errorf(hub.EUNAVAILABLE, "the hub cannot reach its database (%s): %s", reason, what), cause: err}
}

// failed returns err as an outage of the kind what, or else as the
// error of step, explained (friendly).
func (db *DB) failed(err error, what, step string) error {
	if o := outage(err, what); o != err {
		return o
	}
	return fmt.Errorf("%s: %w", step, db.friendly(err))
}

// outageReason says in a few words why err is an outage, "" if it is not
// one.
func outageReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "57P01" || pe.Code == "57P02":
			return "the database server is shutting down"
		case pe.Code == "57P03":
			return "the database server is starting up"
		case pe.Code == "53300":
			return "the database server has no connection slot left"
		case pe.Code == "25P03" || pe.Code == "57P05":
			return "the database server ended a session it heard nothing from"
		case strings.HasPrefix(pe.Code, "08"):
			return "the connection to the database failed"
		}
		return ""
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case pgconn.Timeout(err) || errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was closed"
	}
	var ce *pgconn.ConnectError
	var oe *net.OpError
	if errors.As(err, &ce) || errors.As(err, &oe) {
		return "the connection failed"
	}
	return ""
}
