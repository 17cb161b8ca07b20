package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want codes.Code
		msg  string
	}{
		{hub.Errorf(hub.EINVALID, "bad %s", "x"), codes.InvalidArgument, "bad x"},
		{hub.Errorf(hub.ENOTFOUND, "nf"), codes.NotFound, "nf"},
		{hub.Errorf(hub.ECONFLICT, "c"), codes.AlreadyExists, "c"},
		{hub.Errorf(hub.EPRECONDITION, "p"), codes.FailedPrecondition, "p"},
		{hub.Errorf(hub.EPERMISSION, "perm"), codes.PermissionDenied, "perm"},
		{hub.Errorf(hub.EUNAUTHORIZED, "who"), codes.Unauthenticated, "who"},
		{hub.Errorf(hub.EEXHAUSTED, "full"), codes.ResourceExhausted, "full"},
		{hub.Errorf(hub.EUNAVAILABLE, "down"), codes.Unavailable, "down"},
		{hub.Errorf(hub.EINTERNAL, "oops"), codes.Internal, "oops"},
		{fmt.Errorf("wrapped: %w", hub.Errorf(hub.ENOTFOUND, "inner")), codes.NotFound, "inner"},
		{errors.New("disk on fire at /secret/path"), codes.Internal, "internal error"},
		{context.Canceled, codes.Canceled, "cancelled"},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "deadline"},
		{status.Error(codes.Aborted, "as is"), codes.Aborted, "as is"},
	}
	for _, tt := range tests {
		st, _ := status.FromError(Status(tt.err))
		if st.Code() != tt.want || st.Message() != tt.msg && !strings.Contains(st.Message(), tt.msg) {
			t.Errorf("Status(%v) = %v %q, want %v %q", tt.err, st.Code(), st.Message(), tt.want, tt.msg)
		}
	}
	if Status(nil) != nil {
		t.Error("Status(nil) != nil")
	}
}
