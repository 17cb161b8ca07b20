package hub

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Schedule is the service of the orchestrator's timed work: the beat,
// heartbeat pulses and cron jobs.
type Schedule struct {
	*core
	store    txs[scheduleTx] // the store methods it uses
	messages poster          // pulses, cron jobs and nudges post messages
}

// poster posts a message inside the caller's write (satisfied by
// *Messages): the request checked, then its recipients routed.
type poster interface {
	ValidatePost(req *PostRequest) error
	Route(tx routeTx, sender *Agent, m *Message, req PostRequest, now time.Time) error
}

// scheduleTx is what the schedule service reads and writes in one transaction:
// the store methods it uses, by their group.
type scheduleTx interface {
	// AgentTx
	AddresseeByName(name string) (Addressee, error)
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	ListAgents(includeDisabled bool) ([]*Agent, error)
	UpdateAgent(a *Agent) error
	// CronTx
	CreateCronJob(j *CronJob) error
	CronJobByID(id int64) (*CronJob, error)
	CronJobByName(name string) (*CronJob, error)
	CronJobs() ([]*CronJob, error)
	CronRuns(jobID int64, limit int) ([]*CronRun, error)
	DeleteCronJob(id int64) error
	DueCronJobs(now time.Time, limit int) ([]*CronJob, error)
	InsertCronRun(r *CronRun) error
	UpdateCronJob(j *CronJob) error
	// EventTx
	InsertEvent(e *Event) error
	// MessageTx
	ChannelByName(project, name string) (int64, error)
	ChannelMembers(channelID int64) ([]int64, error)
	EnsureChannel(project, name string, now time.Time) (int64, error)
	InsertChannelMember(channelID, agentID int64, now time.Time) error
	InsertMessage(m *Message, deliveries []Delivery) error
	MessageByID(id int64) (*Message, error)
	// MetaTx
	Meta(key string) (string, error)
	SetMeta(key, value string) error
	SwapMeta(key, old, value string) (bool, error)
	// PersonTx
	ActivePerson(name string) (bool, error)
	// ProjectTx
	LinkedProjects(name string) ([]string, error)
	ProjectExists(name string) (bool, error)
	// PulseTx
	DuePulses(now time.Time, limit int) ([]int64, error)
	Pulse(agentID int64) (*Pulse, error)
	Pulses() ([]*Pulse, error)
	PutPulseConfig(cfg PulseConfig, nextCheckAt time.Time) error
	PutPulseState(st PulseState, nextCheckAt time.Time) error
	RecordPulse(agentID, n int64, at time.Time) (bool, error)
}

// NewSchedule returns the schedule's service.
func NewSchedule(c *Core, messages poster) *Schedule {
	return &Schedule{core: c.core, store: txsOf[scheduleTx](c.store), messages: messages}
}

// anyDue reports whether due, run in a read transaction, finds an agent:
// a tick with nothing due then takes no write transaction.
func anyDue[G any](ctx context.Context, st txs[G], due func(tx G) ([]int64, error)) (bool, error) {
	var ids []int64
	err := view(ctx, st, func(tx G) (err error) {
		ids, err = due(tx)
		return err
	})
	return len(ids) > 0, err
}

const (
	metaPulseBusyWindow = "pulse_busy_window"
	metaTickInterval    = "tick_interval"
)

// PublishScheduleSettings stores the settings the admin views read (the
// beat interval is saved with the beat state).
func (s *Schedule) PublishScheduleSettings(ctx context.Context, c ScheduleSettings) error {
	return update(ctx, s.store, func(tx scheduleTx) error {
		if err := tx.SetMeta(metaTickInterval, strconv.FormatInt(int64(c.TickInterval), 10)); err != nil {
			return err
		}
		return tx.SetMeta(metaPulseBusyWindow, strconv.FormatInt(int64(c.PulseBusyWindow), 10))
	})
}

// pulseBusyWindow returns the published busy window, or the default.
func pulseBusyWindow(tx MetaTx) time.Duration {
	return publishedDuration(tx, metaPulseBusyWindow, DefaultScheduleSettings().PulseBusyWindow)
}

// tickInterval returns the published orchestrator tick, or the default.
func tickInterval(tx MetaTx) time.Duration {
	return publishedDuration(tx, metaTickInterval, DefaultScheduleSettings().TickInterval)
}

func publishedDuration(tx MetaTx, key string, def time.Duration) time.Duration {
	if v, err := tx.Meta(key); err == nil && v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return time.Duration(n)
		}
	}
	return def
}

// updateEach runs fn for every ID, each in its own Update, concurrently so
// that the store groups them into few commits; one failing write does not
// undo the others. It returns the IDs of the agents to wake and the
// joined errors.
func updateEach[G any](ctx context.Context, st txs[G], ids []int64, fn func(tx G, id int64) (wake []int64, err error)) ([]int64, error) {
	const parallel = 64
	var (
		mu    sync.Mutex
		wake  []int64
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, parallel)
	)
	for _, id := range ids {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			var w []int64
			err := update(ctx, st, func(tx G) (err error) {
				w, err = fn(tx, id)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			wake = append(wake, w...)
		}()
	}
	wg.Wait()
	return wake, errors.Join(errs...)
}
