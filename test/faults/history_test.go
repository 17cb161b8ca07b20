package faults

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// outcome is what the client knows of a call.
type outcome int

const (
	// ok: the hub answered with success.
	ok outcome = iota
	// failed: the hub answered an error that says the call did nothing
	// (bad input, not found, refused).
	failed
	// unknown: no answer (connection cut, deadline) or an answer that
	// does not say whether the call took effect (unavailable, internal).
	unknown
)

func (o outcome) String() string {
	return [...]string{"ok", "error", "unknown"}[o]
}

// classify turns a call's error into its outcome and gRPC code.
func classify(err error) (outcome, codes.Code) {
	if err == nil {
		return ok, codes.OK
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return unknown, codes.DeadlineExceeded
	}
	st, isStatus := status.FromError(err)
	if !isStatus {
		return unknown, codes.Unknown
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.ResourceExhausted, codes.Unauthenticated, codes.OutOfRange, codes.Unimplemented:
		return failed, st.Code()
	}
	return unknown, st.Code()
}

// mcpErrorCodes maps the start of the MCP bridge's tool error texts to the
// gRPC code of the hub's answer (internal/mcpbridge/errors.go).
var mcpErrorCodes = []struct {
	prefix string
	code   codes.Code
}{
	{"cannot reach the hub", codes.Unavailable},
	{"the hub cannot serve this now", codes.Unavailable},
	{"the hub refused this agent's token", codes.Unauthenticated},
	{"permission denied", codes.PermissionDenied},
	{"invalid arguments", codes.InvalidArgument},
	{"not found", codes.NotFound},
	{"already exists", codes.AlreadyExists},
	{"not possible now", codes.FailedPrecondition},
	{"the hub is busy", codes.ResourceExhausted},
	{"the hub did not answer in time", codes.DeadlineExceeded},
	{"cancelled", codes.Canceled},
}

// mcpError is the status error of an MCP tool error's text.
func mcpError(text string) error {
	code := codes.Unknown
	for _, m := range mcpErrorCodes {
		if strings.HasPrefix(text, m.prefix) {
			code = m.code
			break
		}
	}
	if strings.HasPrefix(text, "hub error (Internal)") {
		code = codes.Internal
	}
	return status.Error(code, "mcp: "+text)
}

// op is one recorded call, with client-side times.
type op struct {
	Kind    string // post, wait, ack, heartbeat, reserve, release
	Agent   string
	Replica int
	Via     string // grpc or mcp
	Start   time.Time
	End     time.Time
	Outcome outcome
	Code    codes.Code
	Err     string

	// post
	Nonce    string
	To       []string
	Channel  string
	Mentions []string
	High     bool // priority high
	Ack      bool // ack_required
	ID       int64

	// wait: the cursor sent, the messages in reply order (with whether
	// each is high priority), the cursor returned
	After  int64
	IDs    []int64
	Highs  []bool
	Acks   []bool // ack_required
	Cursor int64

	// reserve, release
	Pattern  string
	ResID    string
	Granted  bool
	Expires  time.Time
	Released []string
}

// history is every call of a run, in the order they ended.
type history struct {
	mu  sync.Mutex
	ops []*op
}

func (h *history) add(o *op) {
	h.mu.Lock()
	h.ops = append(h.ops, o)
	h.mu.Unlock()
}

// all returns the recorded calls.
func (h *history) all() []*op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*op(nil), h.ops...)
}

// finish records the end of o with err's outcome.
func finish(o *op, err error) {
	o.End = time.Now()
	o.Outcome, o.Code = classify(err)
	if err != nil {
		o.Err = err.Error()
	}
}
