package admission

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit configures a token bucket: PerSecond tokens are added each
// second, up to Burst. A zero or negative PerSecond turns it off.
type RateLimit struct {
	PerSecond float64 // sustained calls (of weight 1) per second
	Burst     int     // calls allowed at once after a pause (bucket size)
}

// Defaults: generous for an agent (which writes and reads a few times a
// minute; a waiting loop re-waits after each wake-up), tight enough that a
// loop of calls does not take the CPU or the connections others need.
var (
	DefaultWriteLimit  = RateLimit{PerSecond: 50, Burst: 100}
	DefaultReadLimit   = RateLimit{PerSecond: 200, Burst: 400}
	DefaultSearchLimit = RateLimit{PerSecond: 2, Burst: 10}
	// DefaultJoinLimit bounds registrations hub-wide (joins with a usable
	// code): enough for a fleet started at once (the first 20 at once,
	// then 5 a second), and it bounds the agents a leaked many-use code
	// can create.
	DefaultJoinLimit = RateLimit{PerSecond: 5, Burst: 20}
	// DefaultJoinSourceLimit bounds the join attempts of one source
	// address: a fleet started on one machine passes, and one client
	// sending garbage codes spends its own budget, not everyone's.
	DefaultJoinSourceLimit = RateLimit{PerSecond: 1, Burst: 20}
)

// buckets holds one token bucket per key (an agent's ID, a source
// address, a join code's hash).
type buckets[K comparable] struct {
	cfg   RateLimit
	limit rate.Limit

	mu        sync.Mutex
	m         map[K]*rate.Limiter
	lastSweep time.Time
}

// sweepAbove is the number of buckets past which full (idle) buckets are
// dropped, at most once a minute: memory stays bounded by active callers.
const sweepAbove = 4096

// newBuckets returns the buckets for cfg, nil when cfg turns them off.
func newBuckets[K comparable](cfg RateLimit) *buckets[K] {
	if cfg.PerSecond <= 0 {
		return nil
	}
	if cfg.Burst < 1 {
		cfg.Burst = max(1, int(math.Ceil(cfg.PerSecond)))
	}
	return &buckets[K]{cfg: cfg, limit: rate.Limit(cfg.PerSecond), m: map[K]*rate.Limiter{}}
}

// take takes n tokens from key's bucket at now. It returns 0 when the call
// may go on, else how long until the tokens are there (nothing is taken
// then). A nil buckets admits everything.
func (b *buckets[K]) take(key K, n int, now time.Time) time.Duration {
	if b == nil {
		return 0
	}
	n = min(max(n, 1), b.cfg.Burst)
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.m[key]
	if l == nil {
		b.sweep(now)
		l = rate.NewLimiter(b.limit, b.cfg.Burst)
		b.m[key] = l
	}
	r := l.ReserveN(now, n)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// sweep drops the buckets that have refilled: they hold no state worth
// keeping.
func (b *buckets[K]) sweep(now time.Time) {
	if len(b.m) <= sweepAbove || now.Sub(b.lastSweep) < time.Minute {
		return
	}
	b.lastSweep = now
	for k, l := range b.m {
		if l.TokensAt(now) >= float64(b.cfg.Burst) {
			delete(b.m, k)
		}
	}
}
