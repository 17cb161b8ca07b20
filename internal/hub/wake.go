package hub

import (
	"context"
	"sync/atomic"
)

// Wake-ups from the commit. A write transaction records what it changed
// that parked callers wait for (Changes), where the store writes the rows:
// a message's deliveries name the agents whose waits wake, an inbox item
// closed (answered, expired, withdrawn) the calls parked on it, a task
// left ready the next_task calls it fits. What no one statement says (a
// budget that lets a project's agents take tasks again) the service
// records inside the transaction (ChangesTx.Recording). The core's store
// (committer) hands each write its record and, once the write has
// committed, turns the record into wake-ups in one place (core.wake); a
// write that rolls back wakes nothing, and no service wakes anyone after
// its own commit. Across replicas, the PostgreSQL store NOTIFYs in the
// statements that write the deliveries, close the items and leave the
// tasks ready, which PostgreSQL delivers only at commit
// (store/postgres/message.go, inbox.go, task.go); what other replicas report comes
// back through core.wake too (Waits.PostedTo, Inbox.ItemsClosed,
// Tasks.TasksReady).

// Changes is what one write transaction changed that parked callers wait
// for. The store's statements fill it (ChangesTx); its zero value records
// nothing yet, and a nil *Changes records nothing at all.
type Changes struct {
	agents   []int64  // agents delivered new messages
	items    []int64  // inbox items closed
	ready    []*Task  // tasks left ready
	projects []string // projects whose agents may take tasks again
	changed  []agentChange
	people   []string // people whose token was revoked
}

// agentChange is a change of an agent's token or state.
type agentChange struct {
	id     int64
	change AgentChange
}

// Delivered records that a message was delivered to each agent of ds: their
// parked waits wake at the commit.
func (c *Changes) Delivered(ds []Delivery) {
	if c == nil {
		return
	}
	for _, d := range ds {
		c.agents = append(c.agents, d.AgentID)
	}
}

// Closed records that inbox item id left the open state: the calls parked
// on it (an approval's hook, ask_human) wake at the commit.
func (c *Changes) Closed(id int64) {
	if c != nil {
		c.items = append(c.items, id)
	}
}

// Ready records that task t is left ready: the parked next_task calls it
// fits wake at the commit.
func (c *Changes) Ready(t *Task) {
	if c != nil {
		c.ready = append(c.ready, t)
	}
}

// TasksChanged records that project's agents may take tasks they could
// not before (a budget raised or removed): every parked next_task call of
// project wakes at the commit.
func (c *Changes) TasksChanged(project string) {
	if c != nil {
		c.projects = append(c.projects, project)
	}
}

// AgentChanged records that agent id changed (change; 0: its profile
// alone): at the commit the agents cached for authentication are
// forgotten, so the next call reads the agent as committed, and a token
// changed or revoked, an agent disabled or deleted ends the agent's parked
// calls (Waiters.Revoke); a deleted agent's presence and paths in memory
// are dropped.
func (c *Changes) AgentChanged(id int64, change AgentChange) {
	if c != nil {
		c.changed = append(c.changed, agentChange{id, change})
	}
}

// PersonRevoked records that the token of the person named name was
// revoked: the person's open change streams end at the commit.
func (c *Changes) PersonRevoked(name string) {
	if c != nil {
		c.people = append(c.people, name)
	}
}

// Agents returns the agents delivered new messages, in the order recorded
// (an agent may appear more than once).
func (c *Changes) Agents() []int64 { return c.agents }

// Items returns the inbox items closed, in the order recorded.
func (c *Changes) Items() []int64 { return c.items }

// ReadyTasks returns the tasks left ready, in the order recorded (a task
// may appear more than once).
func (c *Changes) ReadyTasks() []*Task { return c.ready }

// reset empties c for a run of a write's fn, keeping its storage.
func (c *Changes) reset() {
	*c = Changes{agents: c.agents[:0], items: c.items[:0], ready: c.ready[:0], projects: c.projects[:0], changed: c.changed[:0], people: c.people[:0]}
}

// ChangesTx is how a write transaction records what it changes.
type ChangesTx interface {
	// Record makes the statements that follow record into c what they
	// change for parked callers (nil: record nothing).
	Record(c *Changes)
	// Recording returns the record the statements fill (nil: none), for
	// what a service records itself.
	Recording() *Changes
}

// committer is the store as the services see it: every Update records what
// its fn changes and, once it has committed, wakes the parked callers
// waiting for it. fn may run more than once (RowLocked): each run records
// afresh.
type committer struct {
	Store
	wake func(*Changes)
}

// Update implements Store.
func (s committer) Update(ctx context.Context, fn func(tx Tx) error) error {
	var ch Changes
	err := s.Store.Update(ctx, func(tx Tx) error {
		ch.reset()
		tx.Record(&ch)
		defer tx.Record(nil)
		return fn(tx)
	})
	if err != nil {
		return err
	}
	s.wake(&ch)
	if c, _ := ctx.Value(commitsKey{}).(*Commits); c != nil {
		c.any.Store(true)
	}
	return nil
}

// Commits tells whether a write committed under a context (WithCommits).
type Commits struct{ any atomic.Bool }

type commitsKey struct{}

// WithCommits returns ctx marked so that every write of the core's store
// that commits under it, or under a context made from it, is told to c. A
// call during which none committed changed nothing a page shows but what
// lives in memory (last calls, paths, parked waits), which the rows' scan
// and the ticks follow: the API announces no change for it.
func WithCommits(ctx context.Context) (_ context.Context, c *Commits) {
	c = &Commits{}
	return context.WithValue(ctx, commitsKey{}, c), c
}

// Any reports whether a write committed under the context.
func (c *Commits) Any() bool { return c.any.Load() }

// wake wakes the parked callers that ch concerns: the waits (and streams
// and next_task calls) of the agents delivered new messages, the calls
// parked on the inbox items closed, the next_task calls a ready task fits
// or whose project changed; and it ends the parked calls of the agents
// whose token was changed or revoked, or who were disabled or deleted,
// once the agents cached for authentication are forgotten, and those of
// the people whose token was revoked.
// It is the one place that wakes parked callers for a change, after the
// commit of a local write or on another replica's report.
func (c *core) wake(ch *Changes) {
	if len(ch.changed) > 0 {
		c.auth.clear()
		for _, a := range ch.changed {
			c.agentChanged(a.id, a.change)
		}
	}
	for _, name := range ch.people {
		c.waiters.Revoke(PersonPrincipal(name), errRevoked())
	}
	if ids := ch.Agents(); len(ids) > 0 {
		c.waiters.Notify(ids...)
	}
	if len(ch.items) > 0 {
		c.waiters.wakeAnswer(ch.items...)
	}
	for _, t := range ch.ready {
		c.waiters.wakeTask(t)
	}
	for _, p := range ch.projects {
		c.waiters.wakeProject(p)
	}
}

// agentChanged ends what agent id holds that its change revokes: the
// parked calls of a token changed or revoked, of an agent disabled or
// deleted, and for a deletion its presence and paths in memory (its row is
// gone: nothing is left to write them to).
func (c *core) agentChanged(id int64, change AgentChange) {
	switch change {
	case TokenChanged:
		c.waiters.Revoke(AgentPrincipal(id), errRevoked())
	case AgentDisabled:
		c.waiters.Revoke(AgentPrincipal(id), errDisabledWhileWaiting())
	case AgentDeleted:
		c.waiters.Revoke(AgentPrincipal(id), errRevoked())
		c.presence.Forget(id)
		c.paths.Forget(id)
	}
}
