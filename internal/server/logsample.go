package server

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
)

// Refused calls (no or unknown token, no permission, over a limit) are
// what a flood is made of: their log lines are sampled so that a flood
// cannot fill the disk, and the lines left out are counted.
const (
	refusalLogPerSecond = 5  // refusal lines written per second, sustained
	refusalLogBurst     = 50 // refusal lines written at once after a quiet spell
)

// LogSampler lets through at most a burst of log lines and then a steady
// rate (a token bucket), counting the lines it drops.
type LogSampler struct {
	perSecond float64
	burst     float64
	now       func() time.Time

	mu      sync.Mutex
	tokens  float64
	at      time.Time
	pending int64 // dropped since the last line let through

	dropped atomic.Int64
}

// NewLogSampler returns a sampler of perSecond lines a second in bursts of burst.
func NewLogSampler(perSecond float64, burst int, now func() time.Time) *LogSampler {
	return &LogSampler{perSecond: perSecond, burst: float64(burst), tokens: float64(burst), now: now, at: now()}
}

// Allow reports whether a line may be written now and, if so, how many
// were dropped since the last one written (to say so in that line).
func (s *LogSampler) Allow() (ok bool, droppedBefore int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if el := now.Sub(s.at); el > 0 {
		s.tokens = min(s.burst, s.tokens+el.Seconds()*s.perSecond)
		s.at = now
	}
	if s.tokens < 1 {
		s.pending++
		s.dropped.Add(1)
		return false, 0
	}
	s.tokens--
	droppedBefore, s.pending = s.pending, 0
	return true, droppedBefore
}

// Dropped returns the number of lines dropped since the start.
func (s *LogSampler) Dropped() int64 { return s.dropped.Load() }

// isRefusal reports whether a call that ended with code was refused at the
// door (rather than failing inside): its log line is sampled.
func isRefusal(code codes.Code) bool {
	return code == codes.Unauthenticated || code == codes.PermissionDenied || code == codes.ResourceExhausted
}

// RefusalLog returns the sampler of refusal log lines (for /metrics).
func (s *Server) RefusalLog() *LogSampler { return s.refusals }

// LogRefusal writes a sampled warning for a call refused before it reached
// the interceptors: call names it (gRPC method or HTTP method and path).
func (s *Server) LogRefusal(ctx context.Context, call, peer, reason string) {
	ok, dropped := s.refusals.Allow()
	if !ok {
		return
	}
	attrs := []slog.Attr{slog.String("call", call), slog.String("peer", peer), slog.String("error", reason)}
	if dropped > 0 {
		attrs = append(attrs, slog.Int64("dropped_before", dropped))
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "refused", attrs...)
}
