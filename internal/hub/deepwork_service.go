package hub

import (
	"context"
	"time"
)

// DeepWorkTx stores deep work declarations.
type DeepWorkTx interface {
	// InsertDeepWork inserts d and sets d.ID.
	InsertDeepWork(d *DeepWork) error
	// UpdateDeepWork writes d's state, ended_at and end reason. ENOTFOUND.
	UpdateDeepWork(d *DeepWork) error
	// DeepWorkDeclarations returns declarations matching q, newest first.
	DeepWorkDeclarations(q DeepWorkQuery) ([]*DeepWork, error)
}

func (s *Liveness) deepWorkMax() time.Duration {
	if s.cfg.MaxDeepWork > 0 {
		return s.cfg.MaxDeepWork
	}
	return s.cfg.Health.DeepWorkMax
}

// StartDeepWorkResult is what StartDeepWork returns.
type StartDeepWorkResult struct {
	DeepWork *DeepWork
	Replaced *DeepWork // the active declaration this one completed, if any
	Expired  *DeepWork // a strict declaration found past its end, if any
	Notes    []string
}

// StartDeepWork declares deep work for the caller (SPEC §3); an active
// declaration is completed and reported as replaced. Errors: EINVALID
// stating the broken rule (nothing is written).
func (s *Liveness) StartDeepWork(ctx context.Context, caller *Agent, req StartDeepWorkRequest) (*StartDeepWorkResult, error) {
	now := s.clock.Now()
	dw, err := NewDeepWork(req, now, s.deepWorkMax())
	if err != nil {
		return nil, err
	}
	var res *StartDeepWorkResult
	err = update(ctx, s.store, func(tx livenessTx) error {
		a, st, loc, err := s.callerLiveness(tx, caller.ID)
		if err != nil {
			return err
		}
		d := dw
		d.HeartbeatID, d.AgentName = a.CurrentHeartbeatID, a.Name
		fx := StartDeepWork(st, d, now, loc)
		// Close the old declaration before the new one exists.
		for _, old := range []*DeepWork{fx.Replaced, fx.Expired} {
			if old != nil {
				if err := tx.UpdateDeepWork(old); err != nil {
					return err
				}
			}
		}
		if err := tx.InsertDeepWork(fx.Started); err != nil {
			return err
		}
		if _, err := s.persistLiveness(tx, st, now, loc, fx.Events); err != nil {
			return err
		}
		started := *fx.Started
		res = &StartDeepWorkResult{DeepWork: &started, Replaced: fx.Replaced, Expired: fx.Expired, Notes: fx.Notes}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// deepWorkView returns a copy of d as a reader should see it at now: an
// active strict declaration past its end reads expired even before the
// orchestrator has marked it so.
func deepWorkView(d *DeepWork, now time.Time) *DeepWork {
	if d == nil {
		return nil
	}
	v := *d
	if v.IsActive() && v.PastEnd(now) {
		v.State, v.EndedAt, v.EndReason = DeepWorkExpired, v.EndsAt, EndedByExpiry
	}
	return &v
}

// DeepWork returns the caller's declaration in force (nil when none; a
// strict one past its end reads expired) and up to limit earlier ones,
// newest first. Errors: EINVALID (limit).
func (s *Liveness) DeepWork(ctx context.Context, caller *Agent, limit int) (*DeepWork, []*DeepWork, error) {
	limit, err := s.limit(limit, 10)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock.Now()
	var current *DeepWork
	var recent []*DeepWork
	err = view(ctx, s.store, func(tx livenessTx) error {
		st, err := tx.LivenessState(caller.ID)
		if err != nil {
			return err
		}
		current = deepWorkView(st.ActiveDeepWork, now)
		all, err := tx.DeepWorkDeclarations(DeepWorkQuery{AgentID: caller.ID, Limit: limit + 1})
		if err != nil {
			return err
		}
		for _, d := range all {
			if current != nil && d.ID == current.ID {
				continue
			}
			if len(recent) < limit {
				recent = append(recent, deepWorkView(d, now))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if current != nil && !current.IsActive() {
		recent = append([]*DeepWork{current}, recent...)
		if len(recent) > limit {
			recent = recent[:limit]
		}
		current = nil
	}
	return current, recent, nil
}

// ListDeepWorkRequest is the input of ListDeepWork. Zero fields match all.
type ListDeepWorkRequest struct {
	Agent string
	State string
	Limit int
}

// ListDeepWork returns declarations, newest first (admin view). Errors:
// EINVALID, ENOTFOUND (agent).
func (s *Liveness) ListDeepWork(ctx context.Context, req ListDeepWorkRequest) ([]*DeepWork, error) {
	q := DeepWorkQuery{State: DeepWorkState(req.State)}
	switch q.State {
	case "", DeepWorkActive, DeepWorkCompleted, DeepWorkExpired:
	default:
		return nil, Errorf(EINVALID, "state %q is not a deep work state: expected active, completed or expired (or nothing for all)", req.State)
	}
	var err error
	if q.Limit, err = s.limit(req.Limit, 50); err != nil {
		return nil, err
	}
	if req.Agent != "" {
		if err := ValidateAgentName(req.Agent); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	var out []*DeepWork
	err = view(ctx, s.store, func(tx livenessTx) error {
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		ds, err := tx.DeepWorkDeclarations(q)
		for _, d := range ds {
			out = append(out, deepWorkView(d, now))
		}
		return err
	})
	return out, err
}

// EndDeepWork ends the named agent's active deep work at an admin's
// request (EndDeepWorkByAdmin). Errors: EINVALID, ENOTFOUND, EPRECONDITION
// (no deep work is active).
func (s *Liveness) EndDeepWork(ctx context.Context, name string) (*DeepWork, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var ended *DeepWork
	err := update(ctx, s.store, func(tx livenessTx) error {
		a, err := tx.AgentByName(name)
		if err != nil {
			return err
		}
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		loc := s.locale(a)
		var evs []Event
		if ended, evs, err = EndDeepWorkByAdmin(st, a.Name, now, loc); err != nil {
			return err
		}
		if err := tx.UpdateDeepWork(ended); err != nil {
			return err
		}
		_, err = s.persistLiveness(tx, st, now, loc, evs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}
