package mcpbridge

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// inputError is an argument the bridge itself could not convert for the hub
// (such as a time that is not RFC 3339). It reaches the model as is.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &inputError{msg: "invalid arguments: " + fmt.Sprintf(format, args...)}
}

// hubError turns an error from a hub call into a tool error the model can
// act on: the hub's own message (it already says what is wrong and what is
// expected) and what the agent can do next, never a command only an
// operator can run. It never ends the session: the next call retries.
func (b *bridge) hubError(err error) error {
	var ie *inputError
	if errors.As(err, &ie) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("cancelled")
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("hub call failed: %v; call the tool again", err)
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		var u *unreachableError
		if errors.As(err, &u) {
			return fmt.Errorf("cannot reach the hub at %s: tell your user the hub is not running (they start it with `hub`), "+
				"then call this tool again", b.addr())
		}
		return fmt.Errorf("the hub cannot serve this now (%s): call this tool again in a few seconds, and tell your user if it persists", msg)
	case codes.Unauthenticated:
		return fmt.Errorf("the hub refused this agent's token (%s): tell your user that HUB_TOKEN is missing or no longer valid "+
			"and needs a new token; no tool works until then", msg)
	case codes.PermissionDenied:
		return fmt.Errorf("permission denied: %s; this is not yours to do: ask the agent or person concerned with post_message", msg)
	case codes.InvalidArgument:
		return fmt.Errorf("invalid arguments: %s; fix them and call again", msg)
	case codes.NotFound:
		return fmt.Errorf("not found: %s; list_agents and list_channels show who and what exists", msg)
	case codes.AlreadyExists:
		return fmt.Errorf("already exists: %s", msg)
	case codes.FailedPrecondition:
		return fmt.Errorf("not possible now: %s", msg)
	case codes.ResourceExhausted:
		return fmt.Errorf("the hub is busy (%s): wait a few seconds, keep only one wait_for_messages running, then call again", msg)
	case codes.DeadlineExceeded:
		return errors.New("the hub did not answer in time: call this tool again")
	case codes.Canceled:
		return errors.New("cancelled")
	default:
		return fmt.Errorf("hub error (%s): %s; call again later, and tell your user if it persists", st.Code(), msg)
	}
}

func (b *bridge) addr() string {
	if b.opts.HubAddr == "" {
		return "its address"
	}
	return b.opts.HubAddr
}
