package mcpbridge

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// badInput is a mistake in a tool's arguments. The SDK returns it to the
// model as an isError result it can read and correct.
func badInput(format string, args ...any) error {
	return fmt.Errorf("invalid arguments: "+format, args...)
}

// hubError turns an error from a gRPC call into a tool error that names the
// fix. It never panics and never ends the session: the next call retries.
func (b *bridge) hubError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("cancelled")
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("hub call failed: %v", err)
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("cannot reach the hub at %s: is it running? start it with `hub` "+
			"(or point HUB_ADDR at it), then call this tool again", b.addr())
	case codes.Unauthenticated:
		return fmt.Errorf("the hub refused this agent's token (%s): set HUB_TOKEN to the token "+
			"printed by `hubctl agent add NAME` (or a new one from `hubctl agent token rotate NAME`)", msg)
	case codes.PermissionDenied:
		return fmt.Errorf("permission denied: %s", msg)
	case codes.InvalidArgument:
		return fmt.Errorf("invalid arguments: %s", msg)
	case codes.NotFound:
		return fmt.Errorf("not found: %s", msg)
	case codes.AlreadyExists:
		return fmt.Errorf("already exists: %s", msg)
	case codes.FailedPrecondition:
		return fmt.Errorf("not possible now: %s", msg)
	case codes.ResourceExhausted:
		return fmt.Errorf("the hub is busy (%s): retry in a few seconds, and keep only one "+
			"wait_for_messages running at a time", msg)
	case codes.DeadlineExceeded:
		return errors.New("the hub did not answer in time: call this tool again")
	case codes.Canceled:
		return errors.New("cancelled")
	default:
		return fmt.Errorf("hub error (%s): %s", st.Code(), msg)
	}
}

func (b *bridge) addr() string {
	if b.opts.HubAddr == "" {
		return "its address"
	}
	return b.opts.HubAddr
}
