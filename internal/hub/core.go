package hub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

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
	TaskLease      time.Duration // a task claim's lease past its holder's last activity, unless its project sets one
	AdminTokenHash []byte        // HashToken of the admin token
	// UsageRetention is how long what agents spend is kept (usage.go).
	UsageRetention UsageRetention
	// SharedStore is set when other processes write the store too
	// (PostgreSQL): their changes to agents reach this process only while
	// its listener is connected (Agents.ListenerConnected) and hears from
	// the server (Agents.ListenerHeard), so until it says so,
	// authentication caches no agent.
	SharedStore bool

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
		TaskLease:      DefaultTaskLease,
		UsageRetention: DefaultUsageRetention,
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
	// UsageRecorded is called for each export of usage an agent's host
	// made, with what it added.
	UsageRecorded(agent string, c UsageCounts)
}

type noMetrics struct{}

func (noMetrics) MessagePosted(string) {}

func (noMetrics) WaitEnded(time.Duration, bool, time.Duration) {}

func (noMetrics) UsageRecorded(string, UsageCounts) {}

// Core is what the services share: the store, the clock, the
// configuration, the registry of parked waits (with the change feed it
// feeds), the presence of agents in memory, the agents cached for
// authentication and the beat. Build it with
// NewCore, build each service from it (NewAgents, NewMessages, …, wired in
// internal/app), call Init before serving.
type Core struct {
	*core
	store committer // wakes parked callers after each commit (wake.go); each service holds its own view of it (txs)
}

type core struct {
	clock    Clock
	cfg      Config
	waiters  *Waiters
	presence *PresenceTracker
	paths    *PathTracker // the agents' paths (reachability.go)
	limits   *rateLimits  // agents whose hosts report rate limiting (usage.go)
	auth     *authCache   // token hash → agent, cleared by every change of an agent's token or state (wake.go)
	warm     *warmSet     // runs the streams' pumps, their carried calls and the waits' reads (warm.go)
	metrics  Metrics
	beat     atomic.Int64
	started  time.Time

	shutdown     chan struct{} // closed by Shutdown: parked waits answer at once
	shutdownOnce sync.Once
}

// NewCore returns the core of a hub over store, whose parked waits are
// registered in waiters (NewWaiters(cfg.WaitLimits, clock)).
func NewCore(store Store, clock Clock, cfg Config, waiters *Waiters) *Core {
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Locale == "" {
		cfg.Locale = LocaleEN
	}
	c := &core{
		clock:    clock,
		cfg:      cfg,
		waiters:  waiters,
		presence: NewPresenceTracker(),
		paths:    NewPathTracker(newReplicaID()),
		limits:   &rateLimits{held: map[int64]time.Time{}},
		auth:     &authCache{clock: clock, off: cfg.SharedStore, leased: cfg.SharedStore},
		warm:     newWarmSet(clock),
		metrics:  noMetrics{},
		started:  clock.Now(),
		shutdown: make(chan struct{}),
	}
	if cfg.Metrics != nil {
		c.metrics = cfg.Metrics
	}
	return &Core{core: c, store: committer{Store: store, wake: c.wake}}
}

// Init loads what the core keeps in memory from the store: agents'
// last-seen times and paths, so that presence and reachability survive a
// restart.
func (c *Core) Init(ctx context.Context) error {
	return view(ctx, txsOf[interface {
		AgentTx
		AgentPathTx
	}](c.store), func(tx interface {
		AgentTx
		AgentPathTx
	}) error {
		as, err := tx.ListAgents(true)
		if err != nil {
			return err
		}
		for _, a := range as {
			c.presence.Seed(a)
		}
		rows, _, err := tx.PathsSince(time.Time{}, c.paths.id)
		c.paths.Load(rows)
		return err
	})
}

// Shutdown makes every parked wait, and every wait that starts from now on,
// answer at once with a normal timed-out reply. Call it before stopping the
// servers so that shutdown does not wait for parked calls.
func (c *Core) Shutdown() {
	c.shutdownOnce.Do(func() {
		close(c.shutdown)
		c.waiters.Stop() // after the close: each wait woken sees it (parkUntil)
	})
}

// Feed returns the hub's change feed: every wake-up of waiters publishes
// TopicMessages; the orchestrator and the API publish the other topics.
func (c *Core) Feed() *Feed { return c.waiters.Feed() }

// Beat returns the global beat counter.
func (c *Core) Beat() int64 { return c.beat.Load() }

// ParkedWaits returns the number of calls parked now.
func (c *Core) ParkedWaits() int { return c.waiters.Count() }

// StartedAt returns when the hub's core was created.
func (c *Core) StartedAt() time.Time { return c.started }

// Config returns the hub's configuration (read-only: a copy).
func (c *Core) Config() Config { return c.cfg }

// Now returns the hub's time.
func (c *Core) Now() time.Time { return c.clock.Now() }

// stopping reports whether Shutdown was called.
func (c *core) stopping() bool {
	select {
	case <-c.shutdown:
		return true
	default:
		return false
	}
}

// locale returns the language of the texts for agent a: its own locale when
// set and valid, else the hub's.
func (c *core) locale(a *Agent) Locale {
	if a != nil && a.Locale != "" {
		if l, err := ParseLocale(a.Locale); err == nil {
			return l
		}
	}
	return Locale(c.cfg.Locale).Or(DefaultLocale)
}

// setBeat sets the global beat counter (the orchestrator owns it).
func (c *core) setBeat(n int64) { c.beat.Store(n) }

// maxDetachedRead bounds a store read run by detachedRead.
const maxDetachedRead = 30 * time.Second

// detachedRead returns a context for one short store read made for a call:
// ctx's values and deadline (at most maxDetachedRead away), but not its
// cancellation. A read that ctx could cancel registers itself on ctx (its
// transaction is a child context), and the call's context then keeps that
// record, an empty map of ~200 bytes, for as long as the call lasts: for a
// parked wait, as long as it is parked. On PostgreSQL the read still ends
// at the call's deadline, or at the bound if the server hangs; a SQLite
// read, once begun, runs to its end (sqlite.DB.View). Call cancel when
// the read is done.
func detachedRead(ctx context.Context) (_ context.Context, cancel context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	rctx, cancel := context.WithTimeout(detached, maxDetachedRead)
	if d, ok := ctx.Deadline(); ok {
		if bound, _ := rctx.Deadline(); d.Before(bound) {
			cancel()
			return context.WithDeadline(detached, d)
		}
	}
	return rctx, cancel
}

// txs is what a service holds of the store: read and write transactions
// that it sees as G, an interface of the store methods it uses (each
// service declares its own: agentsTx, tasksTx, …), never the whole Tx.
type txs[G any] struct {
	view, update func(ctx context.Context, fn func(tx G) error) error
}

// txsOf returns the transactions of st seen as G (an interface that Tx
// implements).
func txsOf[G any](st Store) txs[G] {
	return txs[G]{
		view: func(ctx context.Context, fn func(tx G) error) error {
			return st.View(ctx, func(tx Tx) error { return fn(any(tx).(G)) })
		},
		update: func(ctx context.Context, fn func(tx G) error) error {
			return st.Update(ctx, func(tx Tx) error { return fn(any(tx).(G)) })
		},
	}
}

// view runs fn in a read transaction of st.
func view[G any](ctx context.Context, st txs[G], fn func(tx G) error) error {
	return st.view(ctx, fn)
}

// update runs fn in a write transaction of st.
func update[G any](ctx context.Context, st txs[G], fn func(tx G) error) error {
	return st.update(ctx, fn)
}
