package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// TapHandle refuses a call whose credential is missing or unknown as soon
// as its headers arrive, before its message is read or a handler goroutine
// runs: an unauthenticated client costs the hub a few KB per attempt at
// most. The check is the gate's Precheck for the caller the method's
// admission names (a join code for JoinHub, under the join budgets); a
// method that declares no admission is refused. The interceptors
// then make the full check. A Subscribe call gets a context its handler
// can end (endableStream). Install it with grpc.InTapHandle.
func (s *Server) TapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	rule, ok := admission.Lookup(info.FullMethodName)
	if !ok {
		err := status.Errorf(codes.Unimplemented, "method %s is not part of the hub's API", info.FullMethodName)
		s.LogRefusal(ctx, info.FullMethodName, peerAddr(ctx), status.Convert(err).Message())
		return nil, err
	}
	token := BearerToken(metadata.NewIncomingContext(ctx, info.Header))
	if err := s.gate.Precheck(ctx, rule.Who, token, peerAddr(ctx)); err != nil {
		s.LogRefusal(ctx, info.FullMethodName, peerAddr(ctx), status.Convert(err).Message())
		return nil, err
	}
	if info.FullMethodName == hubv1.AgentService_Subscribe_FullMethodName {
		ctx = endableStream(ctx)
	}
	return ctx, nil
}
