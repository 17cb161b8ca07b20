// Package orchestrator runs the hub's periodic work: beats, the health
// sweep, nudges, heartbeat pulses, cron jobs and the expiry of path
// reservations (SPEC §6). Run is a loop that only waits on a ticker and the
// context; Tick holds the logic and tests call it directly with the time
// they choose.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// DefaultTickInterval is how often Run calls Tick unless configured.
const DefaultTickInterval = 5 * time.Second

// Leader decides which process runs the orchestrator. With one hub process
// it is always this one (AlwaysLeader); with several replicas on a shared
// store an implementation holds a lock (for PostgreSQL, a session advisory
// lock on a dedicated connection) and only its holder ticks.
type Leader interface {
	// Lead reports whether this process leads now, trying to become leader
	// if nobody does. It is called before every tick, so an implementation
	// must be quick and must notice a lost lock (a dropped connection).
	Lead(ctx context.Context) (bool, error)
	// Lost returns a channel closed the moment the leadership held now
	// ends (already closed when this process does not lead; nil when it
	// never ends). The tick running then is cancelled and counts as
	// failed: another process may lead before it would have ended.
	Lost() <-chan struct{}
	// Resign gives up leadership, if held, so another replica can take over.
	Resign(ctx context.Context) error
}

// AlwaysLeader is the Leader of a single-process hub: it always leads.
type AlwaysLeader struct{}

// Lead returns true.
func (AlwaysLeader) Lead(context.Context) (bool, error) { return true, nil }

// Lost returns nil: the leadership never ends.
func (AlwaysLeader) Lost() <-chan struct{} { return nil }

// Resign does nothing.
func (AlwaysLeader) Resign(context.Context) error { return nil }

// Stats describes the ticks run so far, for status and logs.
type Stats struct {
	Leader       bool          // whether this process led at the last tick
	Ticks        int64         // ticks run (as leader)
	Errors       int64         // ticks that returned an error
	Overruns     int64         // ticks that took longer than the interval
	NotLeader    int64         // ticks skipped because another process leads
	LastTickAt   time.Time     // start of the last tick
	LastDuration time.Duration // duration of the last tick
	MaxDuration  time.Duration // longest tick so far
	LastError    string        // error of the last failed tick
	LastErrorAt  time.Time
	Interval     time.Duration
	Last         Report // what the last tick did
}

// Report counts what one tick did.
type Report struct {
	Flushed   int   // agents whose presence was written
	Beat      int64 // the beat after the tick
	Beats     int64 // beats that passed during the tick
	Evaluated int   // agents whose health was re-evaluated
	Events    int   // health and deep work events recorded
	Checked   int   // agents looked at for nudges
	Nudged    int   // nudges sent
	AckNudged int   // nudges sent about overdue acknowledgements
	Pulses    int   // heartbeat pulses delivered
	CronRuns  int   // cron jobs run
	Pruned    int64 // old messages deleted under the retention
	// Reservations counts path reservations that ended: expired, or
	// released because their agent was disabled or silent.
	Reservations int
	// Tasks counts task claims returned to open (their lease lapsed).
	Tasks   int
	Retired int // agents retired (silent past the retirement age)
	Digests int // digests sent of messages held during deep work
	Queued  int // notices about messages still queued
	// Steps is how long each step took, by step name.
	Steps map[string]time.Duration
}

// Orchestrator ticks the hub's periodic work.
type Orchestrator struct {
	// Interval between ticks; DefaultTickInterval if zero.
	Interval time.Duration
	// Clock gives each tick its time; hub.SystemClock if nil.
	Clock hub.Clock
	// Leader decides whether this process ticks; AlwaysLeader if nil.
	Leader Leader
	// Logger receives tick errors and overruns; slog.Default if nil.
	Logger *slog.Logger
	// Timed, if set, is told of each tick this process ran: how long it
	// took and how long each of its steps did (for the metrics).
	Timed func(tick time.Duration, steps map[string]time.Duration)

	jobs  *Jobs
	set   hub.ScheduleSettings
	steps []step

	mu     sync.Mutex
	stats  Stats
	report Report // filled by the steps of the running tick
}

// step is one stage of a tick.
type step struct {
	name string
	fn   func(ctx context.Context, now time.Time) error
}

// Jobs are the services whose due work a tick runs, each step a batch of
// one noun's due work (served by an index), and the feed a finished tick
// is announced on.
type Jobs struct {
	Schedule     *hub.Schedule     // the beat, settings, pulses, cron
	Nudges       *hub.Nudges       // mentions scanned, nudges and the health sweep with them
	Liveness     *hub.Liveness     // presence and paths written, health swept, agents retired
	Receipts     *hub.Receipts     // overdue acknowledgements, digests, queued notices
	Reservations *hub.Reservations // expired reservations
	Ops          *hub.Ops          // message retention
	Usage        *hub.Usage        // usage retention (nil: none)
	Tasks        *hub.Tasks        // task claims whose lease lapsed (nil: none)
	Feed         *hub.Feed         // TopicTick after each tick
}

// JobsOf returns the jobs of the hub's services.
func JobsOf(s *hub.Services) *Jobs {
	return &Jobs{Schedule: s.Schedule, Nudges: s.Nudges, Liveness: s.Liveness, Receipts: s.Receipts, Reservations: s.Reservations, Ops: s.Ops, Usage: s.Usage, Tasks: s.Tasks, Feed: s.Core.Feed()}
}

// New returns an Orchestrator running jobs with the given settings; it
// ticks every set.TickInterval on clock. Call Init before Run or Tick.
func New(clock hub.Clock, jobs *Jobs, set hub.ScheduleSettings) (*Orchestrator, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	o := &Orchestrator{Interval: set.TickInterval, Clock: clock, jobs: jobs, set: set}
	o.steps = []step{
		{"beat", o.stepBeat},
		{"mentions", o.stepMentions},
		{"health+nudges", o.stepHealthAndNudges},
		{"pulses", o.stepPulses},
		{"cron", o.stepCron},
		{"usage-retention", o.stepUsageRetention},
		{"retention", o.stepRetention},
		{"reservations", o.stepReservations},
		{"acks", o.stepAcks},
		{"tasks", o.stepTasks},
		{"digests", o.stepDigests},
		{"notices", o.stepNotices},
		{"retire", o.stepRetire},
	}
	return o, nil
}

// Init prepares a start: it publishes the settings the admin views read
// and loads the beat counter, so that calls made before the first tick see
// the right beat.
func (o *Orchestrator) Init(ctx context.Context) error {
	if err := o.jobs.Schedule.PublishScheduleSettings(ctx, o.set); err != nil {
		return fmt.Errorf("orchestrator init: %w", err)
	}
	if err := o.jobs.Schedule.LoadBeat(ctx); err != nil {
		return fmt.Errorf("orchestrator init: %w", err)
	}
	return nil
}

func (o *Orchestrator) interval() time.Duration {
	if o.Interval > 0 {
		return o.Interval
	}
	return DefaultTickInterval
}

func (o *Orchestrator) clock() hub.Clock {
	if o.Clock != nil {
		return o.Clock
	}
	return hub.SystemClock{}
}

func (o *Orchestrator) leader() Leader {
	if o.Leader != nil {
		return o.Leader
	}
	return AlwaysLeader{}
}

func (o *Orchestrator) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Run ticks every Interval until ctx is done, then resigns leadership and
// returns nil. Ticks never overlap: the loop runs one at a time, and a tick
// that outlasts the interval makes the ticker drop the ticks it missed
// rather than queue them.
func (o *Orchestrator) Run(ctx context.Context) error {
	t := o.clock().NewTicker(o.interval())
	defer t.Stop()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if err := o.leader().Resign(rctx); err != nil {
			o.logger().Warn("orchestrator: resign leadership", "err", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			o.runTick(ctx)
		}
	}
}

// runTick checks leadership, runs Tick and records its duration and error.
func (o *Orchestrator) runTick(ctx context.Context) {
	clock := o.clock()
	start := clock.Now()
	lead, err := o.leader().Lead(ctx)
	if err != nil {
		o.record(ctx, start, 0, false, fmt.Errorf("leader: %w", err))
		return
	}
	if !lead {
		o.mu.Lock()
		o.stats.Leader = false
		o.stats.NotLeader++
		o.mu.Unlock()
		if o.jobs != nil {
			o.follow(ctx, start)
		}
		return
	}
	began := clock.Now() // the system clock's readings are monotonic
	// The tick's writes are made only while this process still leads
	// (hub.LeaderWork: a store shared by replicas fences them), and the
	// tick stops when the leadership ends.
	lost := o.leader().Lost()
	tctx, cancel := context.WithCancelCause(hub.LeaderWork(ctx))
	if lost != nil {
		go func() {
			select {
			case <-lost:
				cancel(errLostLead)
			case <-tctx.Done():
			}
		}()
	}
	err = o.Tick(tctx, start)
	d := clock.Now().Sub(began)
	select {
	case <-lost: // a nil channel (AlwaysLeader) never ends
		err = errors.Join(errLostLead, err)
	default:
	}
	cancel(nil)
	o.record(ctx, start, d, true, err)
	if o.Timed != nil {
		o.Timed(d, o.report.Steps)
	}
	if o.jobs != nil { // tests of the loop alone have no service
		o.jobs.Feed.Publish(hub.TopicTick)
	}
}

// follow is the tick of a replica that does not lead: it writes the
// presence of the calls this replica served (the leader's health sweep and
// nudges read it from the store) and takes up the beat the leader advanced
// (the interaction beat of this replica's callers).
func (o *Orchestrator) follow(ctx context.Context, now time.Time) {
	_, err := o.jobs.Liveness.FlushPresence(ctx, now, o.set)
	if err = errors.Join(err, o.jobs.Schedule.LoadBeat(ctx)); err != nil {
		o.logger().Warn("orchestrator: write presence and read the beat while another replica leads", "err", err)
	}
}

// errLostLead fails a tick during which this process stopped leading.
var errLostLead = errors.New("lost the orchestrator's leader lock during the tick: another replica may lead now, and this tick's writes after that were refused")

// record stores the outcome of one tick in the stats and logs problems;
// an error of a tick cut short by ctx's end (the hub stopping) is none.
func (o *Orchestrator) record(ctx context.Context, at time.Time, d time.Duration, lead bool, err error) {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := &o.stats
	s.Leader = lead
	s.Interval = o.interval()
	if lead {
		s.Ticks++
		s.LastTickAt = at
		s.LastDuration = d
		s.MaxDuration = max(s.MaxDuration, d)
		if d > s.Interval {
			s.Overruns++
			o.logger().Warn("orchestrator: tick overran its interval", "duration", d, "interval", s.Interval)
		}
	}
	if err != nil {
		s.Errors++
		s.LastError = err.Error()
		s.LastErrorAt = at
		o.logger().Error("orchestrator: tick", "err", err)
	}
}

// Stats returns a copy of the tick statistics.
func (o *Orchestrator) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Interval = o.interval()
	return s
}

// Tick runs one round of periodic work at now: every step runs even when an
// earlier one fails, and the errors are joined, each wrapped with its step.
func (o *Orchestrator) Tick(ctx context.Context, now time.Time) error {
	o.report = Report{Steps: make(map[string]time.Duration, len(o.steps))}
	var errs []error
	clock := o.clock()
	for _, s := range o.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		began := clock.Now()
		if err := s.fn(ctx, now); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
		o.report.Steps[s.name] = clock.Now().Sub(began)
	}
	o.mu.Lock()
	o.stats.Last = o.report
	o.mu.Unlock()
	return errors.Join(errs...)
}

// budget is how long a step may keep taking batches of due work in one
// tick; what is left waits for the next tick.
func (o *Orchestrator) budget() time.Duration { return o.interval() / 2 }

// batches calls fn until it reports no more work or the budget is spent.
func (o *Orchestrator) batches(fn func() (more bool, err error)) error {
	clock := o.clock()
	began := clock.Now()
	for {
		more, err := fn()
		if err != nil || !more || clock.Now().Sub(began) > o.budget() {
			return err
		}
	}
}

// stepBeat writes the presence recorded since the last tick (last-seen
// times, interaction beats) and advances the global beat. The delivery
// marks of the replies sent meanwhile are written beside the presence, so
// that both writes wait for the store's writer once (they commit in one
// batch) and the later steps find the marks written (digests, notices).
func (o *Orchestrator) stepBeat(ctx context.Context, now time.Time) error {
	var derr error
	var wg sync.WaitGroup
	wg.Go(func() { derr = o.jobs.Receipts.FlushDeliveries(ctx) })
	n, err := o.jobs.Liveness.FlushPresence(ctx, now, o.set)
	o.report.Flushed = n
	st, beats, berr := o.jobs.Schedule.AdvanceBeat(ctx, now, o.set.BeatInterval)
	o.report.Beat, o.report.Beats = st.Beat, beats
	wg.Wait()
	return errors.Join(err, berr, derr)
}

// stepMentions schedules checks for the mentions posted since the last
// scan. A failed scan holds nothing: the sweep and the checks already
// scheduled go on, and the next tick scans again.
func (o *Orchestrator) stepMentions(ctx context.Context, _ time.Time) error {
	return o.jobs.Nudges.ScanMentions(ctx, o.set)
}

// stepHealthAndNudges re-evaluates the agents whose health can have
// changed by itself (indexed on the next evaluation time), expiring strict
// deep work, and nudges the agents that need it: a batch of each per write
// transaction.
func (o *Orchestrator) stepHealthAndNudges(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		r, more, err := o.jobs.Nudges.SweepHealthAndNudge(ctx, now, o.set)
		o.report.Evaluated += r.Evaluated
		o.report.Events += r.Events
		o.report.Checked += r.Checked
		o.report.Nudged += r.Nudged
		return more, err
	})
}

// stepAcks nudges the recipients of messages whose acknowledgement is
// overdue, once per message.
func (o *Orchestrator) stepAcks(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		n, more, err := o.jobs.Receipts.CheckAckOverdue(ctx, now, o.set)
		o.report.AckNudged += n
		return more, err
	})
}

// stepDigests sends the digests of deep work that ended.
func (o *Orchestrator) stepDigests(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		n, more, err := o.jobs.Receipts.SendDigests(ctx, now, o.set)
		o.report.Digests += n
		return more, err
	})
}

// stepNotices tells the senders of urgent or ack_required messages still
// queued.
func (o *Orchestrator) stepNotices(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		n, more, err := o.jobs.Receipts.CheckQueued(ctx, now, o.set)
		o.report.Queued += n
		return more, err
	})
}

// stepRetire retires the agents silent past the retirement age that hold
// nothing.
func (o *Orchestrator) stepRetire(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		n, more, err := o.jobs.Liveness.RetireAgents(ctx, now, o.set)
		o.report.Retired += n
		return more, err
	})
}

// stepPulses delivers the heartbeat pulses whose preconditions all hold.
func (o *Orchestrator) stepPulses(ctx context.Context, now time.Time) error {
	n, err := o.jobs.Schedule.RunPulses(ctx, now, o.set.BatchLimit)
	o.report.Pulses = n
	return err
}

// stepCron runs the cron jobs that are due, each once.
func (o *Orchestrator) stepCron(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		n, err := o.jobs.Schedule.RunDueCronJobs(ctx, now, o.set.BatchLimit)
		o.report.CronRuns += n
		return n == o.set.BatchLimit, err
	})
}

// stepUsageRetention deletes the minutes and days of what agents spent
// past the usage retention, a batch per write transaction, within the step
// budget.
func (o *Orchestrator) stepUsageRetention(ctx context.Context, now time.Time) error {
	if o.jobs.Usage == nil {
		return nil
	}
	return o.batches(func() (bool, error) {
		n, err := o.jobs.Usage.PruneBatch(ctx, now, o.set.BatchLimit)
		return n >= int64(o.set.BatchLimit), err
	})
}

// stepRetention deletes the messages older than the retention, a batch per
// write transaction, within the step budget; the rest waits for the next
// tick.
func (o *Orchestrator) stepRetention(ctx context.Context, now time.Time) error {
	if o.set.RetainMessages <= 0 {
		return nil
	}
	before := now.Add(-o.set.RetainMessages)
	return o.batches(func() (bool, error) {
		n, err := o.jobs.Ops.PruneMessageBatch(ctx, before, o.set.BatchLimit)
		o.report.Pruned += n
		return n == int64(o.set.BatchLimit), err
	})
}

// stepReservations deletes expired path reservations and releases those of
// agents disabled or silent for set.ReservationReleaseAfter.
func (o *Orchestrator) stepReservations(ctx context.Context, now time.Time) error {
	return o.batches(func() (bool, error) {
		expired, released, err := o.jobs.Reservations.ExpireReservations(ctx, now, o.set.ReservationReleaseAfter, o.set.BatchLimit)
		o.report.Reservations += expired + released
		return expired == o.set.BatchLimit, err
	})
}

// stepTasks returns to open the task claims whose holder showed no
// activity within the lease, in batches within the step budget.
func (o *Orchestrator) stepTasks(ctx context.Context, now time.Time) error {
	if o.jobs.Tasks == nil {
		return nil
	}
	return o.batches(func() (bool, error) {
		n, more, err := o.jobs.Tasks.ExpireLeases(ctx, now, o.set.BatchLimit)
		o.report.Tasks += n
		return more, err
	})
}
