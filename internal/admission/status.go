package admission

import (
	"context"
	"errors"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Status maps an error to a gRPC status error, once, at the edge: a
// domain error's code to its gRPC code with its message; any other error
// to Internal with a generic message (details are logged, not shown); a
// status error as it is.
func Status(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "the call was cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "the call's deadline passed")
	}
	code := codes.Internal
	switch hub.ErrorCode(err) {
	case hub.EINVALID:
		code = codes.InvalidArgument
	case hub.ENOTFOUND:
		code = codes.NotFound
	case hub.ECONFLICT:
		code = codes.AlreadyExists
	case hub.EPRECONDITION:
		code = codes.FailedPrecondition
	case hub.EPERMISSION:
		code = codes.PermissionDenied
	case hub.EUNAUTHORIZED:
		code = codes.Unauthenticated
	case hub.EEXHAUSTED:
		code = codes.ResourceExhausted
	case hub.EUNAVAILABLE:
		code = codes.Unavailable
	}
	return status.Error(code, hub.ErrorMessage(err))
}
