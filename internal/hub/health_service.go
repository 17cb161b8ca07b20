package hub

import (
	"context"
	"fmt"
	"time"
)

// The orchestrator's per-agent work in batches. SweepHealth and
// CheckNudges handle up to a batch of due agents in one write transaction:
// the due index query reads the agents' rows with it, a few set-based
// queries read the rest (declarations, unread mentions) for the whole
// batch, the rules run in Go, and what every agent needs written (next
// evaluation instants, nudge checks, events) goes back in one statement
// each. Only the rare per-agent changes (a health transition, an expired
// declaration, a nudge message) are written row by row. So a due agent
// costs its evaluation, not a dozen round trips to the store.
//
// If the batch fails, it is retried one agent at a time, each in its own
// write (sweepHealthEach, checkNudgesEach), so that one agent whose rows
// cannot be read or written does not hold up the others.

// SweepHealth re-evaluates up to limit agents whose next health evaluation
// is due at now, as SweepLiveness does for each (a strict deep work past
// its end is expired, a changed health is recorded, the next evaluation
// time stored). It returns how many agents were evaluated and how many
// events were recorded; more is true when the batch was full.
func (s *Service) SweepHealth(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error) {
	if ok, err := s.anyDue(ctx, func(tx Tx) ([]int64, error) { return tx.DueLiveness(now, 1) }); !ok || err != nil {
		return 0, 0, false, err
	}
	var due int
	err = s.store.Update(ctx, func(tx Tx) error {
		evaluated, events, due = 0, 0, 0
		rows, err := tx.DueHealth(now, limit)
		if err != nil {
			return err
		}
		due = len(rows)
		var nexts, saveAt []AgentTime
		var saves []*LivenessState
		var evs []Event
		for _, r := range rows {
			n, changed, err := s.sweepState(tx, r, now, &evs)
			if err != nil {
				return fmt.Errorf("health of %s: %w", r.Agent.Name, err)
			}
			if changed {
				saves, saveAt = append(saves, r.State), append(saveAt, n)
			} else {
				nexts = append(nexts, n)
			}
			evaluated++
		}
		if err := tx.InsertEvents(evs); err != nil {
			return err
		}
		at := make([]time.Time, len(saveAt))
		for i, n := range saveAt {
			at[i] = n.At
		}
		if err := tx.SaveLivenessStates(saves, at); err != nil {
			return err
		}
		events = len(evs)
		return tx.SetNextEvals(nexts)
	})
	if err == nil {
		return evaluated, events, due == limit, nil
	}
	if ctx.Err() != nil {
		return 0, 0, false, err
	}
	return s.sweepHealthEach(ctx, now, limit)
}

// sweepState is SweepLiveness on a state already read (r), except that
// it writes nothing but an expired declaration: the events are appended to
// evs, and n is the state's next evaluation instant; changed is true when
// the state must be saved, false when only that instant changes.
func (s *Service) sweepState(tx Tx, r AgentLiveness, now time.Time, evs *[]Event) (n AgentTime, changed bool, err error) {
	loc, st := s.locale(r.Agent), r.State
	exp, expEvents := ExpireDeepWork(st, now, loc)
	if exp != nil {
		if err := tx.UpdateDeepWork(exp); err != nil {
			return AgentTime{}, false, err
		}
	}
	h, next := EvaluateHealth(*st, now, s.cfg.Health, loc)
	healthEvents := RecordHealth(st, h, now, loc)
	*evs = append(append(*evs, expEvents...), healthEvents...)
	changed = exp != nil || len(healthEvents) > 0 || r.Stale
	return AgentTime{AgentID: st.AgentID, At: next}, changed, nil
}

// CheckNudges looks at up to set.BatchLimit agents whose nudge check is due
// at now and nudges those that need it, waking them. more is true when the
// batch was full.
func (s *Service) CheckNudges(ctx context.Context, now time.Time, set ScheduleSettings) (_ NudgeResult, more bool, _ error) {
	if ok, err := s.anyDue(ctx, func(tx Tx) ([]int64, error) { return tx.DueAgentChecks(now, 1) }); !ok || err != nil {
		return NudgeResult{}, false, err
	}
	var checked int
	var wake []int64
	err := s.store.Update(ctx, func(tx Tx) error {
		checked, wake = 0, wake[:0]
		rows, err := tx.DueNudges(now, set.BatchLimit)
		if err != nil {
			return err
		}
		checked = len(rows)
		checks := make([]AgentCheck, 0, len(rows))
		var evs []Event
		var ms []*Message
		var ds [][]Delivery
		for _, r := range rows {
			var in NudgeInput
			if !r.Agent.Disabled() {
				in = s.makeNudgeInput(r.Agent, r.State, r.UnreadMentions, r.OldestMention, now)
			}
			c, post, ev, err := s.applyNudge(r.Agent, r.Check, in, now, set)
			if err != nil {
				return err
			}
			checks = append(checks, c)
			if post != nil {
				ms, ds, wake = append(ms, post.m), append(ds, post.ds), append(wake, r.Agent.ID)
			}
			if ev != nil {
				evs = append(evs, *ev)
			}
		}
		if err := tx.InsertMessages(ms, ds); err != nil {
			return err
		}
		if err := tx.InsertEvents(evs); err != nil {
			return err
		}
		return tx.PutAgentChecks(checks)
	})
	if err == nil {
		s.waiters.Notify(wake...)
		return NudgeResult{Checked: checked, Nudged: len(wake)}, checked == set.BatchLimit, nil
	}
	if ctx.Err() != nil {
		return NudgeResult{}, false, err
	}
	return s.checkNudgesEach(ctx, now, set)
}

// anyDue reports whether due, run in a read transaction, finds an agent:
// a tick with nothing due then takes no write transaction.
func (s *Service) anyDue(ctx context.Context, due func(tx Tx) ([]int64, error)) (bool, error) {
	var ids []int64
	err := s.store.View(ctx, func(tx Tx) (err error) {
		ids, err = due(tx)
		return err
	})
	return len(ids) > 0, err
}
