package hub

import (
	"context"
	"time"
)

// The liveness slice takes part in agent creation (its state row) and in
// status (health and deep work) through the core's hooks.
func init() {
	hookInstallers = append(hookInstallers, func(s *Service) {
		s.hooks.AgentCreated = append(s.hooks.AgentCreated, s.livenessAgentCreated)
		s.hooks.Status = append(s.hooks.Status, s.livenessStatus)
	})
}

// locale returns the language of the texts for agent a: its own locale when
// set and valid, else the hub's.
func (s *Service) locale(a *Agent) Locale {
	if a != nil && a.Locale != "" {
		if l, err := ParseLocale(a.Locale); err == nil {
			return l
		}
	}
	return Locale(s.cfg.Locale).Or(DefaultLocale)
}

func (s *Service) deepWorkMax() time.Duration {
	if s.cfg.MaxDeepWork > 0 {
		return s.cfg.MaxDeepWork
	}
	return s.cfg.Health.DeepWorkMax
}

// livenessAgentCreated stores the new agent's liveness state.
func (s *Service) livenessAgentCreated(_ context.Context, tx Tx, a *Agent) error {
	st := NewLivenessState(a.ID, a.CreatedAt)
	_, next := EvaluateHealth(st, a.CreatedAt, s.cfg.Health, s.locale(a))
	return tx.SaveLivenessState(&st, next)
}

// livenessStatus fills the health and deep work of a status.
func (s *Service) livenessStatus(_ context.Context, tx Tx, a *Agent, out *Status) error {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	out.Health, _ = EvaluateHealth(*st, now, s.cfg.Health, s.locale(a))
	out.DeepWork = deepWorkView(st.ActiveDeepWork, now)
	return nil
}

// persistLiveness finishes every liveness write: it expires a strict
// declaration past its end, writes the declarations that changed, evaluates
// health, records the events (the given ones, then a health transition) and
// saves the state with its next evaluation time.
func (s *Service) persistLiveness(tx Tx, st *LivenessState, now time.Time, loc Locale, events []Event, changed ...*DeepWork) error {
	_, err := s.persistLivenessSweep(tx, st, now, loc, events, changed...)
	return err
}

// persistLivenessSweep is persistLiveness reporting what it did.
func (s *Service) persistLivenessSweep(tx Tx, st *LivenessState, now time.Time, loc Locale, events []Event, changed ...*DeepWork) (LivenessSweep, error) {
	if exp, evs := ExpireDeepWork(st, now, loc); exp != nil {
		changed = append(changed, exp)
		events = append(events, evs...)
	}
	for _, d := range changed {
		if d != nil {
			if err := tx.UpdateDeepWork(d); err != nil {
				return LivenessSweep{}, err
			}
		}
	}
	h, next := EvaluateHealth(*st, now, s.cfg.Health, loc)
	events = append(events, RecordHealth(st, h, now, loc)...)
	for i := range events {
		if err := tx.InsertEvent(&events[i]); err != nil {
			return LivenessSweep{}, err
		}
	}
	if err := tx.SaveLivenessState(st, next); err != nil {
		return LivenessSweep{}, err
	}
	return LivenessSweep{State: st, Health: h, NextEval: next, Events: events}, nil
}

// ActivityLogResult is what CreateActivityLog returns.
type ActivityLogResult struct {
	Log           *ActivityLog
	HeartbeatID   string
	Elapsed       Elapsed   // since the heartbeat began
	Notes         []string  // what the log did to deep work and the reflection duty
	Completed     *DeepWork // the declaration the log completed, if any
	ReflectionDue bool      // the next log must be a reflection
}

// CreateActivityLog files l for the caller under its current heartbeat ID
// and applies it to deep work and the reflection duty (SPEC §3). Errors:
// EINVALID (nothing is written).
func (s *Service) CreateActivityLog(ctx context.Context, caller *Agent, l ActivityLog) (*ActivityLogResult, error) {
	if err := NormalizeActivityLog(&l); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var res *ActivityLogResult
	err := s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		loc := s.locale(a)
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		// The log is the result of the deep work in force: its elapsed time
		// is judged under the declaration.
		inForce := st.ActiveDeepWork.InForce(now)
		log := l
		log.ID, log.AgentID, log.HeartbeatID, log.CreatedAt = 0, a.ID, a.CurrentHeartbeatID, now
		fx := ApplyActivityLog(st, log, now, loc)
		if err := tx.InsertActivityLog(&log); err != nil {
			return err
		}
		if err := s.persistLiveness(tx, st, now, loc, fx.Events, fx.Completed, fx.Expired); err != nil {
			return err
		}
		res = &ActivityLogResult{
			Log:           &log,
			HeartbeatID:   a.CurrentHeartbeatID,
			Elapsed:       ComputeElapsed(heartbeatStart(a), now, inForce, loc, s.cfg.Health.Elapsed()),
			Notes:         fx.Notes,
			Completed:     fx.Completed,
			ReflectionDue: fx.ReflectionDue,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// heartbeatStart returns when a's current heartbeat began.
func heartbeatStart(a *Agent) time.Time {
	if !a.HeartbeatStartedAt.IsZero() {
		return a.HeartbeatStartedAt
	}
	return a.CreatedAt
}

// CheckpointReply is what Checkpoint returns.
type CheckpointReply struct {
	Checkpoint  *Checkpoint
	HeartbeatID string
	CheckpointResult
}

// Checkpoint files "I am consciously still working on currentActivity" for
// the caller under its current heartbeat ID (SPEC §3). Errors: EINVALID
// (nothing is written).
func (s *Service) Checkpoint(ctx context.Context, caller *Agent, currentActivity string) (*CheckpointReply, error) {
	c := Checkpoint{CurrentActivity: currentActivity}
	if err := NormalizeCheckpoint(&c); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var res *CheckpointReply
	err := s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		loc := s.locale(a)
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		cp := c
		cp.AgentID, cp.HeartbeatID, cp.CreatedAt = a.ID, a.CurrentHeartbeatID, now
		r := ApplyCheckpoint(st, cp.HeartbeatID, now, loc, s.cfg.Health.Elapsed())
		if err := tx.InsertCheckpoint(&cp); err != nil {
			return err
		}
		if err := s.persistLiveness(tx, st, now, loc, nil); err != nil {
			return err
		}
		res = &CheckpointReply{Checkpoint: &cp, HeartbeatID: cp.HeartbeatID, CheckpointResult: r}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
func (s *Service) StartDeepWork(ctx context.Context, caller *Agent, req StartDeepWorkRequest) (*StartDeepWorkResult, error) {
	now := s.clock.Now()
	dw, err := NewDeepWork(req, now, s.deepWorkMax())
	if err != nil {
		return nil, err
	}
	var res *StartDeepWorkResult
	err = s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		loc := s.locale(a)
		st, err := tx.LivenessState(a.ID)
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
		if err := s.persistLiveness(tx, st, now, loc, fx.Events); err != nil {
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
func (s *Service) DeepWork(ctx context.Context, caller *Agent, limit int) (*DeepWork, []*DeepWork, error) {
	limit, err := s.limit(limit, 10)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock.Now()
	var current *DeepWork
	var recent []*DeepWork
	err = s.store.View(ctx, func(tx Tx) error {
		st, err := tx.LivenessState(caller.ID)
		if err != nil {
			return err
		}
		current = deepWorkView(st.ActiveDeepWork, now)
		all, err := tx.ListDeepWork(DeepWorkQuery{AgentID: caller.ID, Limit: limit + 1})
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

// HeartbeatElapsed returns the time since heartbeat ID id began (the
// caller's current heartbeat when id is empty) with its message (SPEC §3).
// Errors: EINVALID (malformed or future ID).
func (s *Service) HeartbeatElapsed(ctx context.Context, caller *Agent, id string) (string, Elapsed, error) {
	now := s.clock.Now()
	var e Elapsed
	err := s.store.View(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		start := heartbeatStart(a)
		if id == "" {
			id = a.CurrentHeartbeatID
		} else if start, err = ParseHeartbeatID(id, s.cfg.Location, now); err != nil {
			return err
		}
		st, err := tx.LivenessState(a.ID)
		if err != nil {
			return err
		}
		e = ComputeElapsed(start, now, st.ActiveDeepWork.InForce(now), s.locale(a), s.cfg.Health.Elapsed())
		return nil
	})
	if err != nil {
		return "", Elapsed{}, err
	}
	return id, e, nil
}
