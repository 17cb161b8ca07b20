package hub

import (
	"context"
	"time"
)

// UsageTx reads and writes what agents spend (usage.go).
type UsageTx interface {
	// HeldTask returns the ID of the task agentID holds (claimed; the
	// latest claimed when several), 0 when it holds none.
	HeldTask(agentID int64) (int64, error)
	// AddUsage adds the rows to the minutes' and the days' rollups,
	// summing with the rows of the same agent, time, task and model.
	AddUsage(minutes, days []UsageRollup) error
	// TakeBackUsage subtracts each row's counts (0 or below) from the
	// rows of its agent, time and model, whatever their task, leaving
	// none below zero (a row left with nothing goes): what was counted
	// once and is taken back, whatever task the agent held then.
	TakeBackUsage(minutes, days []UsageRollup) error
	// UsageReport sums the rollups q names (usage_days when q.Days),
	// grouped by q.GroupBy, at most q.Max groups (0: every one), ordered
	// by the fields grouped by.
	UsageReport(q UsageQuery) ([]UsageRow, error)
	// DeleteUsageBefore deletes about limit of the oldest minutes before
	// minutesBefore, then of the days before daysBefore (a zero time
	// deletes none), and returns how many rows it deleted.
	DeleteUsageBefore(minutesBefore, daysBefore time.Time, limit int) (int64, error)
	// UsageBefore reports whether a minute before minutesBefore or a day
	// before daysBefore is stored (a zero time: none looked for), from
	// the tables' index on their time.
	UsageBefore(minutesBefore, daysBefore time.Time) (bool, error)
}

// Usage is the service of what agents spend: it records the usage their
// hosts report and answers reports of it.
type Usage struct {
	*core
	store    txs[usageTx] // the store methods it uses
	budgets  budgetChecker
	liveness checkpointer
}

// budgetChecker holds usage just recorded against the budgets inside the
// recording write, and announces what that opened once it has committed
// (satisfied by *Budgets).
type budgetChecker interface {
	CheckSpend(tx spendTx, agent *Agent, now time.Time) (budgetNews, error)
	Announce(news budgetNews)
}

// checkpointer files an agent's checkpoint inside a write (satisfied by
// *Liveness).
type checkpointer interface {
	FileCheckpoint(tx checkpointTx, caller *Agent, c Checkpoint, now time.Time) (*CheckpointReply, error)
}

// NewUsage returns the usage service: what it records is held against
// budgets, and the tools a host reports its agent ran are filed as the
// agent's checkpoints.
func NewUsage(c *Core, budgets budgetChecker, liveness checkpointer) *Usage {
	return &Usage{core: c.core, store: txsOf[usageTx](c.store), budgets: budgets, liveness: liveness}
}

// usageTx is what the usage service reads and writes in one transaction:
// the rollups, what holding them against budgets writes, and the
// checkpoint of the agent's tool activity.
type usageTx interface {
	spendTx // holding the usage against budgets (Budgets.CheckSpend)
	// ActivityTx
	InsertCheckpoint(c *Checkpoint) error
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// ChangesTx
	Recording() *Changes
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	AgentLiveness(agentID int64) (*Agent, *LivenessState, error)
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// InboxTx
	InsertInboxItem(it *InboxItem) error
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// ProjectTx
	ProjectExists(name string) (bool, error)
	// TaskTx
	TaskByID(id int64) (*Task, error)
	// UsageTx
	AddUsage(minutes, days []UsageRollup) error
	DeleteUsageBefore(minutesBefore, daysBefore time.Time, limit int) (int64, error)
	HeldTask(agentID int64) (int64, error)
	TakeBackUsage(minutes, days []UsageRollup) error
	UsageBefore(minutesBefore, daysBefore time.Time) (bool, error)
	UsageReport(q UsageQuery) ([]UsageRow, error)
}

// Record keeps what agent's host reported in one export, in one write
// transaction: the usage deltas added to its rollups, under the task it
// holds now (what it takes back comes off the rows that counted it,
// whatever task they hold, none left below zero), its spend today held
// against its budgets (Budgets.CheckSpend), and activity, the line of the
// tools the host reports it ran (empty: none), filed as its checkpoint
// (Liveness.Checkpoint) so that they count for its health and the leases
// of its tasks. Budgets are checked here, where usage changes, rather
// than on a tick: only the reporting agent's budgets are read, and a
// limit is seen the moment it is reached. Errors: those of Checkpoint.
func (u *Usage) Record(ctx context.Context, agent *Agent, deltas []UsageDelta, activity string) error {
	var total UsageCounts
	for _, d := range deltas {
		total.Add(d.Counts)
	}
	var cp Checkpoint
	if activity != "" {
		cp.CurrentActivity = activity
		if err := NormalizeCheckpoint(&cp); err != nil {
			return err
		}
	}
	if total.IsZero() && activity == "" {
		return nil
	}
	now := u.clock.Now()
	var news budgetNews
	err := update(ctx, u.store, func(tx usageTx) error {
		if activity != "" {
			if _, err := u.liveness.FileCheckpoint(tx, agent, cp, now); err != nil {
				return err
			}
		}
		if total.IsZero() {
			return nil
		}
		task, err := tx.HeldTask(agent.ID)
		if err != nil {
			return err
		}
		gains, takeBacks := splitTakeBacks(deltas)
		minutes, days := usageRollups(agent.ID, agent.Project, task, gains, now)
		if err := tx.AddUsage(minutes, days); err != nil {
			return err
		}
		if len(takeBacks) > 0 {
			minutes, days = usageRollups(agent.ID, agent.Project, 0, takeBacks, now)
			if err := tx.TakeBackUsage(minutes, days); err != nil {
				return err
			}
		}
		news, err = u.budgets.CheckSpend(tx, agent, now)
		return err
	})
	if err != nil {
		return err
	}
	if !total.IsZero() {
		u.metrics.UsageRecorded(agent.Name, total)
	}
	u.budgets.Announce(news)
	return nil
}

// splitTakeBacks parts deltas into what they add and what they take back
// (a delta with a count below 0: what a session's metrics counted before
// its events came).
func splitTakeBacks(deltas []UsageDelta) (gains, takeBacks []UsageDelta) {
	for _, d := range deltas {
		c := d.Counts
		if c.Input < 0 || c.Output < 0 || c.CacheRead < 0 || c.CacheCreation < 0 || c.Requests < 0 || c.CostUSD < 0 {
			takeBacks = append(takeBacks, d)
		} else {
			gains = append(gains, d)
		}
	}
	return gains, takeBacks
}

// Report sums the usage q names: of one agent when q.AgentID or q.Agent
// is set; who (nil: the admin) reads only the projects who sees. Errors:
// EINVALID (a span that is not one), ENOTFOUND (no agent q.Agent),
// EPERMISSION (q.Agent in a project who does not see).
func (u *Usage) Report(ctx context.Context, who *Person, q UsageQuery) ([]UsageRow, error) {
	if !who.SeesAll() {
		q.Projects = who.Projects
	}
	q, err := planUsageQuery(q, u.clock.Now(), u.cfg.UsageRetention.Minutes)
	if err != nil {
		return nil, err
	}
	var rows []UsageRow
	err = view(ctx, u.store, func(tx usageTx) error {
		if q.AgentID == 0 && q.Agent != "" {
			a, err := tx.AgentByName(q.Agent)
			if err != nil {
				return err
			}
			if err := CheckSees(who, a.Project); err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		rows, err = tx.UsageReport(q)
		return err
	})
	return rows, err
}

// PruneBatch deletes up to about limit rows of usage older than the
// retention (UsageRetention) at now, and returns how many. It looks for
// such rows in a read first, and takes a turn of the writer only when
// there are some.
func (u *Usage) PruneBatch(ctx context.Context, now time.Time, limit int) (int64, error) {
	keep := u.cfg.UsageRetention
	var minutes, days time.Time
	if keep.Minutes > 0 {
		minutes = now.Add(-keep.Minutes)
	}
	if keep.Days > 0 {
		days = now.Add(-keep.Days)
	}
	if minutes.IsZero() && days.IsZero() {
		return 0, nil
	}
	var due bool
	if err := view(ctx, u.store, func(tx usageTx) (err error) { due, err = tx.UsageBefore(minutes, days); return err }); !due || err != nil {
		return 0, err
	}
	var n int64
	err := update(ctx, u.store, func(tx usageTx) error {
		var err error
		n, err = tx.DeleteUsageBefore(minutes, days, limit)
		return err
	})
	return n, err
}

// NoteRateLimit records that agent's host reported an API error of rate
// limiting or overload at at (the zero time or a time ahead: now), the
// limit resetting at reset when the host said (else zero): next_task hands
// the agent nothing and its status shows it rate limited until then.
func (u *Usage) NoteRateLimit(agent *Agent, at, reset time.Time) {
	now := u.clock.Now()
	if at.IsZero() || at.After(now) {
		at = now
	}
	if until := rateLimitUntil(at, reset); until.After(now) {
		u.limits.hold(agent.ID, until)
	}
}
