package hub

import (
	"errors"
	"fmt"
)

// Error codes. They are append-only: adapters map each one to a transport
// status exactly once (gRPC in internal/server, HTTP through the gateway).
const (
	EINVALID      = "invalid"      // bad input; gRPC InvalidArgument, HTTP 400
	ENOTFOUND     = "not_found"    // gRPC NotFound, HTTP 404
	ECONFLICT     = "conflict"     // already exists; gRPC AlreadyExists, HTTP 409
	EPRECONDITION = "precondition" // state forbids it; gRPC FailedPrecondition, HTTP 400
	EPERMISSION   = "permission"   // authenticated but not allowed; gRPC PermissionDenied, HTTP 403
	EUNAUTHORIZED = "unauthorized" // no or bad credentials; gRPC Unauthenticated, HTTP 401
	EEXHAUSTED    = "exhausted"    // a limit is reached; gRPC ResourceExhausted, HTTP 429
	EUNAVAILABLE  = "unavailable"  // shutting down or store unreachable; gRPC Unavailable, HTTP 503
	EINTERNAL     = "internal"     // a bug or an I/O failure; gRPC Internal, HTTP 500
)

// Error is the one error type of the domain. Message is written for the
// person or agent that made the call: it says what is wrong and what is
// expected instead.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return e.Message
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the *Error in err's chain, EINTERNAL for any
// other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return "" // before e, which escapes: a nil error costs no allocation
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of the *Error in err's chain, and a
// generic text for any other error (internal details are logged, not shown).
func ErrorMessage(err error) string {
	if err == nil {
		return "" // before e, which escapes: a nil error costs no allocation
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
