package server

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// RateLimit configures the per-agent token bucket on the agent service's
// write calls. A zero or negative PerSecond turns it off.
type RateLimit struct {
	PerSecond float64 // tokens added per second: sustained writes per second
	Burst     int     // bucket size: writes allowed at once after a pause
}

// DefaultRateLimit is generous: an agent writes a few times a minute, and a
// benchmark with many agents stays far below it per agent.
var DefaultRateLimit = RateLimit{PerSecond: 50, Burst: 100}

// RetryAfterKey is the trailer a rate-limited call carries: whole seconds
// until a retry can succeed. The REST gateway turns it into Retry-After.
const RetryAfterKey = "retry-after"

// writeMethods are the AgentService calls that write: the rate limit
// applies to them only. Reads are cheap and WaitForMessages is bounded by
// the waiter caps.
var writeMethods = map[string]bool{
	agentServicePrefix + "Heartbeat":          true,
	agentServicePrefix + "PostMessage":        true,
	agentServicePrefix + "MarkRead":           true,
	agentServicePrefix + "JoinChannel":        true,
	agentServicePrefix + "LeaveChannel":       true,
	agentServicePrefix + "CreateActivityLog":  true,
	agentServicePrefix + "Checkpoint":         true,
	agentServicePrefix + "StartDeepWork":      true,
	agentServicePrefix + "RespondToPulse":     true,
	agentServicePrefix + "ReservePaths":       true,
	agentServicePrefix + "RenewReservations":  true,
	agentServicePrefix + "ReleasePaths":       true,
	agentServicePrefix + "TakeInjection":      true,
	agentServicePrefix + "CheckStop":          true,
	agentServicePrefix + "AcknowledgeMessage": true,
}

// isWriteMethod reports whether the full gRPC method name is a rate-limited
// write of the agent service.
func isWriteMethod(fullMethod string) bool { return writeMethods[fullMethod] }

// SetRateLimit sets the per-agent write rate limit; call it before serving.
func (s *Server) SetRateLimit(rl RateLimit) { s.limiter = limiterFor(rl) }

// limiterFor returns a limiter for rl, nil when rl turns the limit off.
func limiterFor(rl RateLimit) *rateLimiter {
	if rl.PerSecond <= 0 {
		return nil
	}
	return newRateLimiter(rl, time.Now)
}

// admit runs after authentication: it records the caller for the request
// log and, for a write call, takes a token from the caller's bucket or
// returns ResourceExhausted with the wait in the retry-after trailer.
func (s *Server) admit(ctx context.Context, fullMethod string) error {
	a := Caller(ctx)
	if a == nil {
		return nil
	}
	noteAgent(ctx, a)
	lim, what, flags := s.limiter, "writes", "--rate-limit and --rate-burst"
	if !writeMethods[fullMethod] {
		if !readMethods[fullMethod] {
			return nil
		}
		lim, what, flags = s.readLimiter, "reads", "--read-rate-limit and --read-rate-burst"
	}
	if lim == nil {
		return nil
	}
	wait := lim.take(a.ID)
	if wait <= 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	grpc.SetTrailer(ctx, metadata.Pairs(RetryAfterKey, strconv.Itoa(secs)))
	rl := lim.cfg
	return status.Error(codes.ResourceExhausted, fmt.Sprintf(
		"rate limit: agent %q may make %s %s per second (bursts of %d); retry in %s (the hub's %s set this)",
		a.Name, strconv.FormatFloat(rl.PerSecond, 'f', -1, 64), what, rl.Burst, wait.Round(time.Millisecond), flags))
}

// rateLimiter holds one token bucket per agent.
type rateLimiter struct {
	cfg RateLimit
	now func() time.Time

	mu        sync.Mutex
	buckets   map[int64]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// sweepAbove is the number of buckets past which full (idle) buckets are
// dropped, at most once a minute: memory stays bounded by active agents.
const sweepAbove = 4096

func newRateLimiter(cfg RateLimit, now func() time.Time) *rateLimiter {
	if cfg.Burst < 1 {
		cfg.Burst = max(1, int(math.Ceil(cfg.PerSecond)))
	}
	return &rateLimiter{cfg: cfg, now: now, buckets: map[int64]*bucket{}}
}

// take takes one token from id's bucket. It returns 0 when the call may go
// on, else how long until a token is available (nothing is taken then).
func (l *rateLimiter) take(id int64) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[id]
	if b == nil {
		l.sweep(now)
		b = &bucket{tokens: float64(l.cfg.Burst), at: now}
		l.buckets[id] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(l.cfg.Burst), b.tokens+el.Seconds()*l.cfg.PerSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / l.cfg.PerSecond * float64(time.Second))
}

// sweep drops the buckets that have refilled: they hold no state worth keeping.
func (l *rateLimiter) sweep(now time.Time) {
	if len(l.buckets) <= sweepAbove || now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for id, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.cfg.PerSecond >= float64(l.cfg.Burst) {
			delete(l.buckets, id)
		}
	}
}
