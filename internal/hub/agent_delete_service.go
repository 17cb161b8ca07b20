package hub

import "context"

// AgentDeleteTx deletes one agent's data (agent_delete.go says what goes).
type AgentDeleteTx interface {
	// DeleteSentMessages reads at most scan messages in ID order after
	// after, deletes at most limit of them sent by sender, with their
	// deliveries (the recipients' unread counters follow), search entries
	// and receipts, and says where the next batch starts.
	DeleteSentMessages(sender string, after int64, scan, limit int) (SentBatch, error)
	// DeleteAgentRows deletes at most limit of the agent's rows in the
	// tables that grow with its history: the deliveries to it (with the
	// hub's own messages that it alone received), its activity logs,
	// checkpoints, events and read marks. It returns how many rows it
	// deleted; fewer than limit means none is left.
	DeleteAgentRows(agentID int64, limit int) (int64, error)
	// DeleteAgent deletes the messages a sent after the ID after, the cron
	// jobs that target it with their runs, and its row, which takes every
	// row that refers to it. It returns how many messages it deleted.
	// ENOTFOUND.
	DeleteAgent(a *Agent, after int64) (int64, error)
}

// SentBatch is what one DeleteSentMessages call did.
type SentBatch struct {
	Deleted int64 // messages deleted
	Next    int64 // the next batch reads the messages after this ID
	Done    bool  // the batch read up to the newest message
}

// NewSentBatch is what a store's DeleteSentMessages reports after deleting
// sent (its sender's messages in ID order, at most limit) from the window
// of IDs (after, hi], which reached the newest message if newest is set.
func NewSentBatch(sent []int64, after, hi int64, newest bool, limit int) SentBatch {
	b := SentBatch{Deleted: int64(len(sent))}
	switch {
	case len(sent) == limit: // more of the sender's may follow in the window
		b.Next = sent[len(sent)-1]
	case newest: // DeleteAgent reads the last window again
		b.Next, b.Done = after, true
	default:
		b.Next = hi
	}
	return b
}

// DeleteAgent deletes a disabled agent and all its data (see
// agent_delete.go), in batches that never hold the writer long, then its
// row in one last transaction that records an EventAgentDeleted event. Its
// parked waits end with EUNAUTHORIZED. Errors: EINVALID (a bad name),
// ENOTFOUND, EPRECONDITION (the agent is enabled: nothing is deleted),
// ctx.Err() (what was deleted stays deleted; the agent stays, disabled).
func (s *Agents) DeleteAgent(ctx context.Context, name string) (AgentDeletion, error) {
	if err := ValidateAgentName(name); err != nil {
		return AgentDeletion{}, err
	}
	var a *Agent
	if err := view(ctx, s.store, func(tx agentsTx) (err error) {
		a, err = tx.AgentByName(name)
		return err
	}); err != nil {
		return AgentDeletion{}, err
	}
	if err := checkDeletable(a); err != nil {
		return AgentDeletion{}, err
	}
	d := AgentDeletion{Agent: a}
	after, err := s.deleteSentMessages(ctx, &d)
	if err != nil {
		return d, err
	}
	for {
		var n int64
		err := update(ctx, s.store, func(tx agentsTx) (err error) {
			n, err = tx.DeleteAgentRows(a.ID, AgentDeleteBatch)
			return err
		})
		d.RowsDeleted += n
		if err != nil {
			return d, err
		}
		if n < AgentDeleteBatch {
			break
		}
		if err := ctx.Err(); err != nil {
			return d, err
		}
	}
	s.auth.clear() // no read begun before the deletion is cached; the commit clears it again
	now := s.clock.Now()
	var tail int64 // the messages it sent after the batches' last window
	err = update(ctx, s.store, func(tx agentsTx) error {
		cur, err := tx.AgentByID(a.ID)
		if err == nil && cur.Name != a.Name { // deleted meanwhile, its ID taken again
			err = Errorf(ENOTFOUND, "agent %q was deleted meanwhile", a.Name)
		}
		if err != nil {
			return err
		}
		if err := checkDeletable(cur); err != nil { // enabled again meanwhile
			return err
		}
		if tail, err = tx.DeleteAgent(cur, after); err != nil {
			return err
		}
		last := d
		last.MessagesDeleted += tail
		e := newEvent(0, EventAgentDeleted, now, deletedDetail(last))
		if err := tx.InsertEvent(&e); err != nil {
			return err
		}
		tx.Recording().AgentChanged(cur.ID, AgentDeleted) // its parked calls end at the commit
		return nil
	})
	if err != nil {
		return d, err
	}
	d.MessagesDeleted += tail
	return d, nil
}

// deleteSentMessages deletes the messages d's agent sent, batch by batch,
// and returns the ID the last batch read up to.
func (s *Agents) deleteSentMessages(ctx context.Context, d *AgentDeletion) (int64, error) {
	var after int64
	for {
		var b SentBatch
		err := update(ctx, s.store, func(tx agentsTx) (err error) {
			b, err = tx.DeleteSentMessages(d.Agent.Name, after, AgentDeleteScan, AgentDeleteBatch)
			return err
		})
		if err != nil {
			return after, err
		}
		d.MessagesDeleted += b.Deleted
		after = b.Next
		if b.Done {
			return after, nil
		}
		if err := ctx.Err(); err != nil {
			return after, err
		}
	}
}

// forgetDeleted forgets the presence of the agents among touches that are
// no longer stored: deleted by another process whose notice this one
// missed (a PostgreSQL listener reconnecting), they would fail every
// flush. A look that fails is made again after the next failed flush.
func (s *Liveness) forgetDeleted(ctx context.Context, touches []Touch) {
	_ = view(ctx, s.store, func(tx livenessTx) error { //nolint:errcheck // see above
		for _, t := range touches {
			if _, err := tx.AgentByID(t.AgentID); ErrorCode(err) == ENOTFOUND {
				s.presence.Forget(t.AgentID)
			} else if err != nil {
				return err
			}
		}
		return nil
	})
}
