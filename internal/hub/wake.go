package hub

import "context"

// Wake-ups from the commit. A write transaction records what it changed
// that parked callers wait for (Changes), where the store writes the rows:
// a message's deliveries name the agents whose waits wake. The core's
// store (committer) hands each write its record and, once the write has
// committed, turns the record into wake-ups in one place (core.wake); a
// write that rolls back wakes nothing, and no service wakes anyone after
// its own commit. Across replicas, the PostgreSQL store NOTIFYs in the
// statement that writes the deliveries, which PostgreSQL delivers only at
// commit (store/postgres/message.go); what other replicas report comes
// back through core.wake too (Waits.PostedTo).

// Changes is what one write transaction changed that parked callers wait
// for. The store's statements fill it (ChangesTx); its zero value records
// nothing yet, and a nil *Changes records nothing at all.
type Changes struct {
	agents []int64 // agents delivered new messages
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

// Agents returns the agents delivered new messages, in the order recorded
// (an agent may appear more than once).
func (c *Changes) Agents() []int64 { return c.agents }

// ChangesTx is how a write transaction records what it changes.
type ChangesTx interface {
	// Record makes the statements that follow record into c what they
	// change for parked callers (nil: record nothing).
	Record(c *Changes)
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
		ch.agents = ch.agents[:0]
		tx.Record(&ch)
		defer tx.Record(nil)
		return fn(tx)
	})
	if err != nil {
		return err
	}
	s.wake(&ch)
	return nil
}

// wake wakes the parked callers that ch concerns: the waits (and streams
// and next_task calls) of the agents delivered new messages. It is the one
// place that wakes parked callers for a change, after the commit of a
// local write or on another replica's report.
func (c *core) wake(ch *Changes) {
	if ids := ch.Agents(); len(ids) > 0 {
		c.waiters.Notify(ids...)
	}
}
