package hub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// locale returns the language of the texts for agent a: its own locale when
// set and valid, else the hub's.
func (s *Service) locale(a *Agent) Locale {
	if a != nil && a.Locale != "" {
		if l, err := ParseLocale(a.Locale); err == nil {
			return l
		}
	}
	return Locale(s.cfg.Locale).Or(DefaultLocale)
}

// Config holds the hub's rules and limits. DefaultConfig gives the defaults.
type Config struct {
	Location *time.Location // hub time zone (heartbeat IDs, cron)
	Locale   Locale         // default message language

	MaxBodyBytes int // message body limit
	MaxFanout    int // recipients one message may reach
	MaxMentions  int // distinct @names one message may mention (body and mentions together)
	MaxListLimit int // largest page a list returns

	WaitDefault    time.Duration // WaitForMessages timeout when none is given
	WaitMax        time.Duration // larger timeouts are clamped to this
	WaitLimits     WaitLimits
	PollInterval   time.Duration // fallback poll for writes from outside the process
	DeadlineMargin time.Duration // answer this long before the caller's own deadline
	// PollOnly makes waits poll the store every PollInterval instead of being
	// woken by the notifier: the seed's design, kept for the benchmark only.
	PollOnly bool

	Health         HealthConfig
	MaxDeepWork    time.Duration // longest strict deep work
	AdminTokenHash []byte        // HashToken of the admin token

	Metrics Metrics // nil means none
}

// DefaultConfig returns the default configuration.
func DefaultConfig() Config {
	return Config{
		Location:       time.Local,
		Locale:         LocaleEN,
		MaxBodyBytes:   64 << 10,
		MaxFanout:      1000,
		MaxMentions:    DefaultMaxMentions,
		MaxListLimit:   500,
		WaitDefault:    60 * time.Second,
		WaitMax:        60 * time.Second,
		WaitLimits:     WaitLimits{PerAgent: 4, Total: 20000},
		PollInterval:   5 * time.Second,
		DeadlineMargin: 500 * time.Millisecond,
		Health:         DefaultHealthConfig(),
		MaxDeepWork:    4 * time.Hour,
	}
}

// Metrics receives the hub's measurements (Prometheus in production).
type Metrics interface {
	// MessagePosted is called for each message posted, with its project.
	MessagePosted(project string)
	// WaitEnded is called when a WaitForMessages call returns: how long it
	// was parked, whether it timed out, and for a wake-up by a post, the
	// time from the post's commit to the return.
	WaitEnded(parked time.Duration, timedOut bool, wakeLatency time.Duration)
}

type noMetrics struct{}

func (noMetrics) MessagePosted(string) {}

func (noMetrics) WaitEnded(time.Duration, bool, time.Duration) {}

// Service is the hub's domain: every operation the API offers, over a Store.
type Service struct {
	store    Store
	clock    Clock
	cfg      Config
	waiters  *Waiters
	presence *PresenceTracker
	metrics  Metrics
	beat     atomic.Int64
	started  time.Time

	auth authCache // token hash → agent, cleared on every token or state change

	shutdown     chan struct{} // closed by Shutdown: parked waits answer at once
	shutdownOnce sync.Once
	poke         chan struct{} // Poke: the fallback watcher looks now
	deliveries   deliveryLog   // delivery marks of replies sent, written by Run
	matchSlots   chan struct{} // reservation pattern matching under way (reservation_service.go)

	// watchFrom is the newest message ID when Init ran: the fallback
	// watcher's starting point (see Run). Set before Run starts.
	watchFrom   int64
	watchInited bool
	// watched is the newest message ID whose recipients the watcher has
	// woken (by a look or a report, PostedTo); valid once watching.
	watchMu  sync.Mutex
	watched  int64
	watching bool

	onlineMu sync.Mutex
	onlineAt time.Time
	online   map[string]onlineNames // by project
}

// NewService returns a Service over store. Call Init before serving and Run
// for the fallback watcher.
func NewService(store Store, clock Clock, cfg Config) *Service {
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Locale == "" {
		cfg.Locale = LocaleEN
	}
	s := &Service{
		store:    store,
		clock:    clock,
		cfg:      cfg,
		waiters:  NewWaiters(cfg.WaitLimits),
		presence: NewPresenceTracker(),
		metrics:  noMetrics{},
		started:  clock.Now(),
		shutdown: make(chan struct{}),
		poke:     make(chan struct{}, 1),

		matchSlots: make(chan struct{}, matchingSlots()),
	}
	s.deliveries.kick = make(chan struct{}, 1)
	if cfg.Metrics != nil {
		s.metrics = cfg.Metrics
	}
	return s
}

// Init loads what the service keeps in memory from the store: last-seen
// times, so that presence survives a restart, and the newest message ID,
// from which the fallback watcher starts.
func (s *Service) Init(ctx context.Context) error {
	return s.store.View(ctx, func(tx Tx) error {
		as, err := tx.ListAgents(true)
		if err != nil {
			return err
		}
		for _, a := range as {
			s.presence.Seed(a)
		}
		if s.watchFrom, err = tx.MaxMessageID(); err != nil {
			return err
		}
		s.watchInited = true
		return nil
	})
}

// Shutdown makes every parked wait, and every wait that starts from now on,
// answer at once with a normal timed-out reply. Call it before stopping the
// servers so that shutdown does not wait for parked calls.
func (s *Service) Shutdown() {
	s.shutdownOnce.Do(func() {
		close(s.shutdown)
		s.waiters.WakeAll() // after the close: each wait woken sees it (parkUntil)
	})
}

// stopping reports whether Shutdown was called.
func (s *Service) stopping() bool {
	select {
	case <-s.shutdown:
		return true
	default:
		return false
	}
}

// Store returns the service's store (for the orchestrator).
func (s *Service) Store() Store { return s.store }

// Clock returns the service's clock.
func (s *Service) Clock() Clock { return s.clock }

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// Waiters returns the registry of parked waits.
func (s *Service) Waiters() *Waiters { return s.waiters }

// Beat returns the global beat counter.
func (s *Service) Beat() int64 { return s.beat.Load() }

// setBeat sets the global beat counter (the orchestrator owns it).
func (s *Service) setBeat(n int64) { s.beat.Store(n) }

// StartedAt returns when the service was created.
func (s *Service) StartedAt() time.Time { return s.started }

// maxDetachedRead bounds a store read run by detachedRead.
const maxDetachedRead = 30 * time.Second

// detachedRead returns a context for one short store read made for a call:
// ctx's values and deadline (at most maxDetachedRead away), but not its
// cancellation. A read that ctx could cancel registers itself on ctx (its
// transaction is a child context), and the call's context then keeps that
// record, an empty map of ~200 bytes, for as long as the call lasts: for a
// parked wait, as long as it is parked. The read still ends at the call's
// deadline, or at the bound if a store hangs. Call cancel when the read is
// done.
func detachedRead(ctx context.Context) (_ context.Context, cancel context.CancelFunc) {
	limit := time.Now().Add(maxDetachedRead)
	if d, ok := ctx.Deadline(); ok && d.Before(limit) {
		limit = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), limit)
}
