package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// RequestIDKey is the metadata key (and, over REST, the header) that carries
// a call's request ID. A client may set it to follow its call in the hub's
// log; otherwise the hub makes one. The reply carries it back in a header.
const RequestIDKey = "x-request-id"

// maxRequestIDLen bounds a client-given request ID; a longer or non-printable
// one is replaced, so the log cannot be flooded or forged through it.
const maxRequestIDLen = 128

type callInfoKey struct{}

// callInfo is filled as a call goes through the interceptors: the logging
// interceptor creates it, admission records who the caller is. It is the
// context the call's handler runs in, which carries it (callInfoKey): one
// allocation per call rather than two.
type callInfo struct {
	context.Context
	given  string // the client's request ID, if sound
	random uint64 // else the request ID's 64 random bits, formatted when read
	agent  string
}

// Value implements context.Context.
func (ci *callInfo) Value(key any) any {
	if key == (callInfoKey{}) {
		return ci
	}
	return ci.Context.Value(key)
}

// requestID is the call's request ID: the client's, or the hub's random
// one, formatted only when something reads it (the reply's header, a log
// line), which most carried calls never do.
func (ci *callInfo) requestID() string {
	if ci.given != "" {
		return ci.given
	}
	var id [8]byte // 64 random bits in hex, without fmt
	binary.BigEndian.PutUint64(id[:], ci.random)
	return hex.EncodeToString(id[:])
}

// RequestID returns the request ID of the call ctx belongs to ("" outside a call).
func RequestID(ctx context.Context) string {
	if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		return ci.requestID()
	}
	return ""
}

// noteAgent records the caller's name for the call's log line.
func noteAgent(ctx context.Context, a *hub.Agent) {
	if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		ci.agent = a.Name
	}
}

// LoggingInterceptor logs every unary call once it ends: method, status
// code, duration, request ID, the caller's agent name when authenticated,
// the peer address, and via=inproc for a call made in process (REST, MCP
// over HTTP), via=stream for one a stream carried (Subscribe). Successful calls are logged at debug level, failed ones at
// warn (a cancelled call, such as a wait whose client went away, at
// debug). Chain it before UnaryInterceptor so that refused calls are logged
// too; their lines (Unauthenticated, PermissionDenied, ResourceExhausted)
// go through refusals, which drops those past its rate (nil: no sampling).
// Durations are read from clock.
func LoggingInterceptor(log *slog.Logger, refusals *LogSampler, clock hub.Clock) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := callStart(ctx, clock) // agent_wait.go
		ci := &callInfo{Context: ctx, given: incomingRequestID(ctx)}
		if ci.given == "" {
			ci.random = rand.Uint64()
		}
		ctx = ci
		resp, err := handler(ctx, req)
		// Set once the handler is done (the reply is sent after this
		// returns): a parked wait then holds no header of its own. A call
		// a stream carries has no header of its own to send.
		carried := streamCarried(ctx)
		if !carried {
			grpc.SetHeader(ctx, metadata.MD{RequestIDKey: {ci.requestID()}})
		}
		code := status.Code(err)
		level := slog.LevelDebug
		if err != nil && code != codes.Canceled {
			level = slog.LevelWarn
		}
		var droppedBefore int64
		if level == slog.LevelWarn && refusals != nil && isRefusal(code) {
			var ok bool
			if ok, droppedBefore = refusals.Allow(); !ok {
				return resp, err
			}
		}
		if log.Enabled(ctx, level) {
			attrs := []slog.Attr{
				slog.String("method", info.FullMethod),
				slog.String("code", code.String()),
				slog.Duration("duration", clock.Now().Sub(start)),
				slog.String("request_id", ci.requestID()),
			}
			if ci.agent != "" {
				attrs = append(attrs, slog.String("agent", ci.agent))
			}
			if addr := peerAddr(ctx); addr != "" {
				attrs = append(attrs, slog.String("peer", addr))
			}
			switch {
			case calledInProcess(ctx):
				attrs = append(attrs, slog.String("via", inproc.Network))
			case carried:
				attrs = append(attrs, slog.String("via", "stream"))
			}
			if err != nil {
				attrs = append(attrs, slog.String("error", status.Convert(err).Message()))
			}
			if droppedBefore > 0 {
				attrs = append(attrs, slog.Int64("dropped_before", droppedBefore))
			}
			log.LogAttrs(ctx, level, "rpc", attrs...)
		}
		return resp, err
	}
}

// peerAddr returns the client's address: the network peer, or for a call
// made in process (REST and MCP over HTTP, through inproc), the HTTP
// client's address when the caller put it last in x-forwarded-for (the
// REST gateway does), else "inproc".
func peerAddr(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	addr := p.Addr.String()
	if p.Addr.Network() != inproc.Network {
		return addr
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if xff := md.Get("x-forwarded-for"); len(xff) > 0 {
		hops := strings.Split(xff[len(xff)-1], ",")
		return strings.TrimSpace(hops[len(hops)-1])
	}
	return addr
}

// calledInProcess reports whether the call came through inproc (REST, MCP
// over HTTP) rather than over a gRPC connection.
func calledInProcess(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	return ok && p.Addr != nil && p.Addr.Network() == inproc.Network
}

// incomingRequestID returns the client's x-request-id if it is sound, else
// "" (the hub makes one).
func incomingRequestID(ctx context.Context) string {
	// ValueFromIncomingContext reads one key; FromIncomingContext would
	// copy every header of every call.
	for _, v := range metadata.ValueFromIncomingContext(ctx, RequestIDKey) {
		if validRequestID(v) {
			return v
		}
	}
	return ""
}

func validRequestID(s string) bool {
	if s == "" || len(s) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
