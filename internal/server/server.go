// Package server serves the hub's gRPC API: it authenticates every call,
// maps protos to the domain and domain errors to gRPC status codes.
package server

import (
	"context"
	"log/slog"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Info is what the admin API reports about the running hub beyond the
// domain: set by cmd/hub.
type Info struct {
	DataDir       string
	SchemaVersion func() int
	// TickStats reports the orchestrator's last tick, if one runs.
	TickStats func() TickStats
	// CAFingerprint is that of the hub's own CA when it serves TLS with
	// one, else "".
	CAFingerprint string
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
	svc   *hub.Services
	info  Info
	log   *slog.Logger
	Agent *AgentServer
	Admin *AdminServer

	gate     *admission.Gate // who may call, and the budgets
	refusals *LogSampler     // samples the log lines of refused calls (logsample.go)
	codec    *Codec          // marks requests with invalid UTF-8 (codec.go)
	// carry runs the calls a stream carries (agent_stream.go): the
	// interceptors of the calls alone (CarryThrough), else UnaryInterceptor.
	carry grpc.UnaryServerInterceptor
}

// New returns a Server over svc whose calls gate admits.
func New(svc *hub.Services, gate *admission.Gate, info Info, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{svc: svc, gate: gate, info: info, log: log, refusals: NewLogSampler(refusalLogPerSecond, refusalLogBurst, svc.Core.Now), codec: NewCodec()}
	s.Agent = &AgentServer{s: s}
	s.Admin = &AdminServer{s: s}
	s.carry = s.UnaryInterceptor
	return s
}

// CarryThrough makes the calls a stream carries (SubscribeRequest.call) run
// through interceptors, the first outermost, as each call made alone runs
// through the gRPC server's: logged, counted and admitted as that call.
// Without it they run through UnaryInterceptor alone. Set it before serving.
func (s *Server) CarryThrough(interceptors ...grpc.UnaryServerInterceptor) {
	s.carry = inproc.Chain(interceptors...)
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

type personKey struct{}

// personOf returns the person a people's call acts for: the person token's,
// or nil for the admin token (hub.Person's methods read nil as the admin).
func personOf(ctx context.Context) *hub.Person {
	p, _ := ctx.Value(personKey{}).(*hub.Person)
	return p
}

// Caller returns the agent authenticated for this call (nil on admin calls).
func Caller(ctx context.Context) *hub.Agent {
	a, _ := ctx.Value(callerKey{}).(*hub.Agent)
	return a
}

// adminField refuses a field of a call agents and the admin both make
// that only the admin may give (given reports it is set): an agent's call
// acts as the agent, in its own project.
func adminField(ctx context.Context, name string, given bool) error {
	if given && Caller(ctx) != nil {
		return hub.Errorf(hub.EPERMISSION, "%s is the admin's to give: an agent's call acts as the agent, in its own project; leave %s empty", name, name)
	}
	return nil
}

// callerProject is the project a call agents and the admin both make
// reads: the agent's own, or the one the admin names (project, "" every
// project); an agent naming one is refused (adminField).
func callerProject(ctx context.Context, project string) (string, error) {
	if err := adminField(ctx, "project", project != ""); err != nil {
		return "", err
	}
	if c := Caller(ctx); c != nil {
		return hub.ProjectOr(c.Project), nil
	}
	return project, nil
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

// UnaryInterceptor admits each unary call (the gate's full check: the
// caller's credential and budget, by the method's admission) and maps
// domain errors to gRPC status codes. A call whose admission parks (the
// long poll) is let through: its method handler admitted it before it
// parked.
func (s *Server) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if rule, _ := admission.Lookup(info.FullMethod); rule.Parks {
		// Its method handler admitted it before it parked (agent_wait.go).
		if a := Caller(ctx); a != nil {
			noteAgent(ctx, a)
		}
	} else {
		var release func()
		var err error
		if ctx, release, err = s.admitCall(ctx, req, info.FullMethod); err != nil {
			return nil, err
		}
		defer release()
	}
	resp, err := handler(ctx, req)
	if err != nil {
		st := admission.Status(err)
		if status.Code(st) == codes.Internal {
			s.log.Error("internal error", "method", info.FullMethod, "request_id", RequestID(ctx), "err", err)
		}
		return nil, st
	}
	return resp, nil
}

// admitCall checks a call before its handler runs: a request the codec
// marked, then the gate's Admit (who calls, the caller's budget). It
// returns ctx carrying the caller, and the function that gives back what
// the call holds (a search slot) once it ends. A refusal to wait on sets
// the retry-after trailer.
func (s *Server) admitCall(ctx context.Context, req any, method string) (context.Context, func(), error) {
	if err := s.codec.check(req); err != nil {
		return nil, nil, err
	}
	c, release, err := s.gate.Admit(ctx, method, BearerToken(ctx))
	if caller := c.Agent; caller != nil {
		ctx = WithCaller(ctx, caller)
		noteAgent(ctx, caller)
	}
	if c.Person != nil {
		ctx = context.WithValue(ctx, personKey{}, c.Person)
	}
	if err != nil {
		if secs := admission.RetryAfterSeconds(err); secs != "" {
			grpc.SetTrailer(ctx, metadata.Pairs(RetryAfterKey, secs))
		}
		return nil, nil, err
	}
	return ctx, release, nil
}

// RetryAfterKey is the trailer a call refused for its rate carries: whole
// seconds until a retry can succeed. The REST gateway turns it into
// Retry-After.
const RetryAfterKey = "retry-after"

// StreamInterceptor admits each streaming call (Subscribe) once, when it
// opens: the caller's credential and one call of its budget; the frames
// then cost no budget. It maps domain errors to gRPC status codes as
// UnaryInterceptor does.
func (s *Server) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, release, err := s.admitCall(ss.Context(), nil, info.FullMethod)
	if err != nil {
		return err
	}
	defer release()
	if err := handler(srv, &wrappedStream{ServerStream: ss, ctx: ctx}); err != nil {
		st := admission.Status(err)
		if status.Code(st) == codes.Internal {
			s.log.Error("internal error", "method", info.FullMethod, "request_id", RequestID(ctx), "err", err)
		}
		return st
	}
	return nil
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }
