package hub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the hub's version, set at build time with
// -ldflags "-X github.com/agenthub/hub/internal/hub.Version=v1.2.3".
var Version = "dev"

// Config holds the hub's rules and limits. DefaultConfig gives the defaults.
type Config struct {
	Location *time.Location // hub time zone (heartbeat IDs, cron)
	Locale   Locale         // default message language

	MaxBodyBytes int // message body limit
	MaxFanout    int // recipients one message may reach
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
	MessagePosted()
	// WaitEnded is called when a WaitForMessages call returns: how long it
	// was parked, whether it timed out, and for a wake-up by a post, the
	// time from the post's commit to the return.
	WaitEnded(parked time.Duration, timedOut bool, wakeLatency time.Duration)
}

type noMetrics struct{}

func (noMetrics) MessagePosted()                               {}
func (noMetrics) WaitEnded(time.Duration, bool, time.Duration) {}

// Hooks let the liveness and schedule parts of the domain take part in core
// operations without the core knowing them. Each runs inside the
// operation's transaction; an error aborts the operation.
type Hooks struct {
	AgentCreated []func(ctx context.Context, tx Tx, a *Agent) error
	Heartbeat    []func(ctx context.Context, tx Tx, a *Agent, now time.Time) error
	// Status fills the liveness and beat parts of a status.
	Status []func(ctx context.Context, tx Tx, a *Agent, st *Status) error
}

func (h *Hooks) agentCreated(ctx context.Context, tx Tx, a *Agent) error {
	for _, f := range h.AgentCreated {
		if err := f(ctx, tx, a); err != nil {
			return err
		}
	}
	return nil
}

// hookInstallers are called by NewService; other files of the package add
// their hooks here from init functions.
var hookInstallers []func(*Service)

// Service is the hub's domain: every operation the API offers, over a Store.
type Service struct {
	store    Store
	clock    Clock
	cfg      Config
	waiters  *Waiters
	presence *PresenceTracker
	hooks    Hooks
	metrics  Metrics
	beat     atomic.Int64
	started  time.Time

	auth authCache // token hash → agent, cleared on every token or state change

	shutdown     chan struct{} // closed by Shutdown: parked waits answer at once
	shutdownOnce sync.Once

	// watchFrom is the newest message ID when Init ran: the fallback
	// watcher's starting point (see Run). Set before Run starts.
	watchFrom   int64
	watchInited bool

	onlineMu    sync.Mutex
	onlineAt    time.Time
	online      []string
	waitingList []string
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
	}
	if cfg.Metrics != nil {
		s.metrics = cfg.Metrics
	}
	for _, install := range hookInstallers {
		install(s)
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
			s.presence.Seed(a.ID, a.LastSeenAt, a.LastInteractionBeat)
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
	s.shutdownOnce.Do(func() { close(s.shutdown) })
}

// Store returns the service's store (for the orchestrator).
func (s *Service) Store() Store { return s.store }

// Clock returns the service's clock.
func (s *Service) Clock() Clock { return s.clock }

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// Waiters returns the registry of parked waits.
func (s *Service) Waiters() *Waiters { return s.waiters }

// Presence returns the in-memory presence tracker.
func (s *Service) Presence() *PresenceTracker { return s.presence }

// Beat returns the global beat counter.
func (s *Service) Beat() int64 { return s.beat.Load() }

// SetBeat sets the global beat counter (the orchestrator owns it).
func (s *Service) SetBeat(n int64) { s.beat.Store(n) }

// StartedAt returns when the service was created.
func (s *Service) StartedAt() time.Time { return s.started }

// IsAdminToken reports whether token is the admin token (constant time).
func (s *Service) IsAdminToken(token string) bool {
	return len(s.cfg.AdminTokenHash) > 0 && TokenHashEqual(HashToken(token), s.cfg.AdminTokenHash)
}

// Authenticate returns the agent holding token and records the call for
// presence. Errors: EUNAUTHORIZED (missing or unknown token), EPERMISSION
// (disabled agent).
func (s *Service) Authenticate(ctx context.Context, token string) (*Agent, error) {
	if token == "" {
		return nil, Errorf(EUNAUTHORIZED, "missing token: send \"authorization: Bearer <agent token>\" (create one with `hubctl agent add NAME`)")
	}
	hash := HashToken(token)
	a, ok := s.auth.get(hash)
	if !ok {
		gen := s.auth.generation()
		err := s.store.View(ctx, func(tx Tx) (err error) {
			a, err = tx.AgentByTokenHash(hash)
			return err
		})
		if ErrorCode(err) == ENOTFOUND {
			return nil, Errorf(EUNAUTHORIZED, "unknown or revoked token: check HUB_TOKEN (rotate it with `hubctl agent token rotate NAME`)")
		} else if err != nil {
			return nil, err
		}
		if a.Disabled() {
			return nil, Errorf(EPERMISSION, "agent %q is disabled: an admin can enable it with `hubctl agent enable %s`", a.Name, a.Name)
		}
		s.auth.put(hash, a, gen)
	}
	// The agent as returned carries its previous interaction (since_last is
	// the gap before this call); then this call is recorded.
	prevCall, prevBeat := s.presence.LastCall(a.ID)
	if prevCall.After(a.LastSeenAt) {
		a.LastSeenAt = prevCall
	}
	a.LastInteractionBeat = max(a.LastInteractionBeat, prevBeat)
	s.presence.Touch(a.ID, s.clock.Now(), s.Beat())
	return a, nil
}

// Run runs the fallback watcher until ctx ends: every PollInterval it looks
// for messages committed by someone other than this process (another hub
// replica, a manual edit) and wakes their recipients. Its cost is one or two
// indexed queries per interval, whatever the number of parked waits.
func (s *Service) Run(ctx context.Context) error {
	if s.cfg.PollOnly || s.cfg.PollInterval <= 0 {
		<-ctx.Done()
		return nil
	}
	// Start from where Init looked, before any wait could park: reading the
	// high-water mark here instead would race with the first waits, and an
	// outside write landing in between would never wake them.
	last := s.watchFrom
	if !s.watchInited {
		if err := s.store.View(ctx, func(tx Tx) (err error) { last, err = tx.MaxMessageID(); return err }); err != nil && ctx.Err() == nil {
			return err
		}
	}
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			last = s.pollOnce(ctx, last)
		}
	}
}

// pollOnce wakes the recipients of the messages above last and returns the
// new high-water mark. Errors are retried at the next interval.
func (s *Service) pollOnce(ctx context.Context, last int64) int64 {
	var newest int64
	var ids []int64
	err := s.store.View(ctx, func(tx Tx) (err error) {
		if newest, err = tx.MaxMessageID(); err != nil || newest <= last {
			return err
		}
		ids, err = tx.RecipientsAfter(last)
		return err
	})
	if err != nil || newest <= last {
		return last
	}
	s.waiters.Notify(ids...)
	return newest
}
