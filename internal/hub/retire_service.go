package hub

import (
	"context"
	"time"
)

// RetireTx stores the retirement of agents (retire.go).
type RetireTx interface {
	// RetireCandidates returns up to limit enabled agents, not retired,
	// whose last call (or, for one that never called, creation) is before
	// cutoff and that hold no path reservation in force at now and no
	// claimed task, the longest silent first. It reads only such agents (an index on the
	// last call of enabled agents not retired).
	RetireCandidates(cutoff, now time.Time, limit int) ([]RetireCandidate, error)
	// RetireAgents sets the retirement time of those of ids still enabled,
	// not retired and silent since before cutoff to at, and returns their
	// IDs.
	RetireAgents(ids []int64, cutoff, at time.Time) ([]int64, error)
	// ReturnAgents clears the retirement of those of ids that are retired
	// and whose stored last call is after it, and returns their IDs.
	ReturnAgents(ids []int64) ([]int64, error)
}

// retireTx is what retiring agents reads and writes.
type retireTx interface {
	// EventTx
	InsertEvents(es []Event) error
	// RetireTx
	ReturnAgents(ids []int64) ([]int64, error)
}

// RetireAgents retires up to set.BatchLimit agents that have made no call
// for set.RetireAfter and hold nothing (retire.go): none with a call,
// parked wait or live path this process knows of and has not written yet.
// It records an event for each and returns how many it retired; more is
// true when the batch was full and some were retired. With RetireAfter 0
// it does nothing.
func (s *Liveness) RetireAgents(ctx context.Context, now time.Time, set ScheduleSettings) (n int, more bool, _ error) {
	if set.RetireAfter <= 0 {
		return 0, false, nil
	}
	cutoff := now.Add(-set.RetireAfter)
	var cands []RetireCandidate
	err := view(ctx, s.store, func(tx livenessTx) (err error) {
		cands, err = tx.RetireCandidates(cutoff, now, set.BatchLimit)
		return err
	})
	if err != nil || len(cands) == 0 {
		return 0, false, err
	}
	var ids []int64
	byID := make(map[int64]RetireCandidate, len(cands))
	for _, c := range cands {
		if last, _ := s.presence.LastCall(c.AgentID); !last.Before(cutoff) ||
			s.waiters.AgentCount(c.AgentID) > 0 || s.paths.Reach(c.AgentID, now).Reachable {
			continue // seen by this process since: not written yet
		}
		ids = append(ids, c.AgentID)
		byID[c.AgentID] = c
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	var done []int64
	err = update(ctx, s.store, func(tx livenessTx) (err error) {
		if done, err = tx.RetireAgents(ids, cutoff, now); err != nil {
			return err
		}
		evs := make([]Event, len(done))
		for i, id := range done {
			evs[i] = newEvent(id, EventRetired, now, retiredText(byID[id], set.RetireAfter, now))
		}
		return tx.InsertEvents(evs)
	})
	if err != nil {
		return 0, false, err
	}
	return len(done), len(cands) == set.BatchLimit && len(done) > 0, nil
}

// returnAgents brings back, inside the flush of presence, the retired
// agents among touches (they called since), with an event each.
func returnAgents(tx retireTx, touches []Touch, now time.Time) error {
	ids := make([]int64, len(touches))
	for i, t := range touches {
		ids[i] = t.AgentID
	}
	back, err := tx.ReturnAgents(ids)
	if err != nil || len(back) == 0 {
		return err
	}
	evs := make([]Event, len(back))
	for i, id := range back {
		evs[i] = newEvent(id, EventReturned, now, "returned: called again after its retirement")
	}
	return tx.InsertEvents(evs)
}
