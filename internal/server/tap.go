package server

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// maxTokenLen bounds the bearer token the hub will look up: hub tokens are
// far shorter, and a longer one is refused without a store read.
const maxTokenLen = 256

// TapHandle refuses a call to the agent or admin service whose token is
// missing or unknown as soon as its headers arrive, before its message is
// read or a handler goroutine runs: an unauthenticated client costs the hub
// a few KB per attempt at most. The interceptors then make the full check
// (which agent, enabled, admin or not). JoinHub, whose credential is a join
// code, is checked by CheckJoin instead. Install it with grpc.InTapHandle.
func (s *Server) TapHandle(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !strings.HasPrefix(info.FullMethodName, agentServicePrefix) && !strings.HasPrefix(info.FullMethodName, adminServicePrefix) {
		return ctx, nil
	}
	admin := strings.HasPrefix(info.FullMethodName, adminServicePrefix)
	token := BearerToken(metadata.NewIncomingContext(ctx, info.Header))
	if info.FullMethodName == JoinHubMethod {
		// The one call without an agent token: its join code is checked
		// here instead, under the join budget.
		if err := s.CheckJoin(ctx, token); err != nil {
			s.LogRefusal(ctx, info.FullMethodName, peerAddr(ctx), status.Convert(err).Message())
			return nil, err
		}
		return ctx, nil
	}
	var msg string
	switch {
	case token == "" && admin:
		msg = "missing admin token: send \"authorization: Bearer <admin token>\" (the hub writes it to <data-dir>/admin.token)"
	case token == "":
		msg = "missing token: send \"authorization: Bearer <agent token>\" (create one with `hubctl agent add NAME`)"
	case len(token) <= maxTokenLen && s.svc.KnownToken(ctx, token):
		return ctx, nil
	case admin:
		msg = "unknown admin token: use the token in <data-dir>/admin.token"
	default:
		msg = "unknown or revoked token: check HUB_TOKEN (rotate it with `hubctl agent token rotate NAME`)"
	}
	s.LogRefusal(ctx, info.FullMethodName, peerAddr(ctx), msg)
	return nil, status.Error(codes.Unauthenticated, msg)
}
