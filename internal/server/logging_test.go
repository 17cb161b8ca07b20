package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLoggingInterceptor(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clock := hub.NewFakeClock(time.Unix(1_700_000_000, 0))
	icpt := LoggingInterceptor(log, nil, clock)
	info := &grpc.UnaryServerInfo{FullMethod: "/hub.v1.AgentService/PostMessage"}

	// A client's request ID is used and reaches the handler's context; the
	// duration is the clock's.
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(RequestIDKey, "req-42"))
	ctx = withCallStart(ctx, clock.Now())
	var seen string
	icpt(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
		seen = RequestID(ctx)
		clock.Advance(1500 * time.Millisecond)
		return "ok", nil
	})
	if seen != "req-42" {
		t.Errorf("handler saw request ID %q, want req-42", seen)
	}
	// An error is logged at warn with its message; a made-up ID is generated.
	icpt(context.Background(), nil, info, func(context.Context, any) (any, error) {
		return nil, status.Error(codes.InvalidArgument, "body is empty")
	})
	// A cancelled call (a client gone from a wait) is not a warning.
	icpt(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/hub.v1.AgentService/WaitForMessages"}, func(context.Context, any) (any, error) {
		return nil, status.Error(codes.Canceled, "gone")
	})
	// A forged ID (newline: log injection) is replaced.
	bad := metadata.NewIncomingContext(context.Background(), metadata.Pairs(RequestIDKey, "x\nlevel=ERROR"))
	icpt(bad, nil, info, func(ctx context.Context, _ any) (any, error) { seen = RequestID(ctx); return nil, nil })
	if seen == "x\nlevel=ERROR" || len(seen) != 16 {
		t.Errorf("forged request ID kept: %q", seen)
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d log lines, want 4:\n%s", len(lines), buf.String())
	}
	for i, want := range [][]string{
		{"level=DEBUG", "msg=rpc", "method=/hub.v1.AgentService/PostMessage", "code=OK", "request_id=req-42", "duration=1.5s"},
		{"level=WARN", "code=InvalidArgument", `error="body is empty"`, "request_id="},
		{"level=DEBUG", "code=Canceled", "method=/hub.v1.AgentService/WaitForMessages"},
		{"level=DEBUG", "code=OK"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("log line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
}

func TestValidRequestID(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"abc-123":                true,
		"0123456789abcdef":       true,
		"":                       false,
		"has space":              false,
		"tab\there":              false,
		"é":                      false,
		strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false,
	} {
		if got := validRequestID(s); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", s, got, want)
		}
	}
}
