// Package server serves the hub's gRPC API: it authenticates every call,
// maps protos to the domain and domain errors to gRPC status codes.
package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Service full names, as in gRPC method paths.
const (
	agentServicePrefix = "/" + "hub.v1.AgentService" + "/"
	adminServicePrefix = "/" + "hub.v1.AdminService" + "/"
)

// Info is what the admin API reports about the running hub beyond the
// domain: set by cmd/hub.
type Info struct {
	DataDir       string
	SchemaVersion func() int
	// TickStats reports the orchestrator's last tick, if one runs.
	TickStats func() TickStats
}

// TickStats describes the orchestrator's ticks for GetHubInfo.
type TickStats struct {
	Ticks     int64
	LastAt    int64 // Unix nanoseconds
	LastMicro int64
	LastError string
}

// Server holds the two gRPC services.
type Server struct {
	svc   *hub.Service
	info  Info
	log   *slog.Logger
	Agent *AgentServer
	Admin *AdminServer

	limiter     *rateLimiter // per-agent write rate limit (ratelimit.go); nil = off
	readLimiter *rateLimiter // per-agent read budget (readlimit.go); nil = off
	joinLimiter *rateLimiter // hub-wide budget of join attempts (joincode.go); nil = off
	refusals    *LogSampler  // samples the log lines of refused calls (logsample.go)
	codec       *Codec       // marks requests with invalid UTF-8 (codec.go)
}

// New returns a Server over svc.
func New(svc *hub.Service, info Info, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{svc: svc, info: info, log: log, refusals: NewLogSampler(refusalLogPerSecond, refusalLogBurst, time.Now), codec: NewCodec()}
	s.Agent = &AgentServer{s: s}
	s.Admin = &AdminServer{s: s}
	return s
}

// Register registers both services on g (a grpc.Server or the in-process
// connection, inproc.Conn).
func (s *Server) Register(g grpc.ServiceRegistrar) {
	g.RegisterService(s.agentServiceDesc(), s.Agent) // agent_wait.go
	hubv1.RegisterAdminServiceServer(g, s.Admin)
}

// Codec returns the codec to install on the gRPC servers that use this
// Server's interceptors (grpc.ForceServerCodecV2).
func (s *Server) Codec() *Codec { return s.codec }

// Service returns the domain service.
func (s *Server) Service() *hub.Service { return s.svc }

// AgentServer implements hubv1.AgentServiceServer. Handlers live in one file
// per noun (agent_*.go).
type AgentServer struct {
	hubv1.UnimplementedAgentServiceServer
	s *Server
}

// AdminServer implements hubv1.AdminServiceServer (admin_*.go).
type AdminServer struct {
	hubv1.UnimplementedAdminServiceServer
	s *Server
}

type callerKey struct{}

// Caller returns the agent authenticated for this call (nil on admin calls).
func Caller(ctx context.Context) *hub.Agent {
	a, _ := ctx.Value(callerKey{}).(*hub.Agent)
	return a
}

// WithCaller returns ctx carrying the authenticated agent (for tests and
// in-process callers).
func WithCaller(ctx context.Context, a *hub.Agent) context.Context {
	return context.WithValue(ctx, callerKey{}, a)
}

// BearerToken returns the bearer token of the call's "authorization" metadata.
func BearerToken(ctx context.Context) string {
	for _, v := range metadata.ValueFromIncomingContext(ctx, "authorization") {
		if scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return ""
}

// authenticate decides who makes the call named method.
func (s *Server) authenticate(ctx context.Context, method string) (context.Context, error) {
	token := BearerToken(ctx)
	switch {
	case strings.HasPrefix(method, adminServicePrefix):
		if token == "" {
			return nil, status.Error(codes.Unauthenticated, "missing admin token: send \"authorization: Bearer <admin token>\" (the hub writes it to <data-dir>/admin.token)")
		}
		if s.svc.IsAdminToken(token) {
			return ctx, nil
		}
		if _, err := s.svc.Authenticate(ctx, token); err == nil {
			return nil, status.Error(codes.PermissionDenied, "this call needs the admin token; an agent token was given (the admin token is in <data-dir>/admin.token)")
		}
		return nil, status.Error(codes.Unauthenticated, "unknown admin token: use the token in <data-dir>/admin.token")
	case method == JoinHubMethod:
		return ctx, nil // its credential is a join code, checked by CheckJoin and the handler
	case strings.HasPrefix(method, agentServicePrefix):
		// The admin token is no agent's token: it is told apart only when
		// the agent check fails, so an agent's call hashes its token once.
		a, err := s.svc.Authenticate(ctx, token)
		if err != nil && token != "" && s.svc.IsAdminToken(token) {
			return nil, status.Error(codes.PermissionDenied, "this call acts as an agent and needs that agent's token; the admin token was given (create an agent with `hubctl agent add NAME`)")
		}
		if err != nil {
			return nil, toStatus(err)
		}
		return WithCaller(ctx, a), nil
	}
	return ctx, nil // health checks and reflection
}

// UnaryInterceptor authenticates each unary call and maps domain errors to
// gRPC status codes.
func (s *Server) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	var err error
	if a := admittedEarly(ctx); a != nil { // agent_wait.go
		ctx, err = a.apply(ctx)
	} else {
		ctx, err = s.admitCall(ctx, req, info.FullMethod)
	}
	if err != nil {
		return nil, err
	}
	resp, err := handler(ctx, req)
	if err != nil {
		st := toStatus(err)
		if status.Code(st) == codes.Internal {
			s.log.Error("internal error", "method", info.FullMethod, "request_id", RequestID(ctx), "err", err)
		}
		return nil, st
	}
	return resp, nil
}

// admitCall checks a call before its handler runs: a request the codec
// marked, who calls (authenticate), the caller's rate (admit). On a refusal
// by rate it also returns the authenticated context.
func (s *Server) admitCall(ctx context.Context, req any, method string) (context.Context, error) {
	if err := s.codec.check(req); err != nil {
		return nil, err
	}
	ctx, err := s.authenticate(ctx, method)
	if err != nil {
		return nil, err
	}
	return ctx, s.admit(ctx, method) // ratelimit.go
}

// StreamInterceptor authenticates each streaming call (none are defined
// yet; this keeps a future one from being unauthenticated).
func (s *Server) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := s.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return handler(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

// toStatus maps an error to a gRPC status error, once, at the edge.
func toStatus(err error) error {
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
