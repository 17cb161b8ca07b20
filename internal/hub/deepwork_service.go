package hub

import (
	"context"
	"regexp"
	"time"
)

// This file holds the liveness reads of the admin API (health reports,
// events, deep work) and the orchestrator's health step.

// LivenessSweep is the outcome of re-evaluating one agent's liveness.
type LivenessSweep struct {
	State    *LivenessState // as saved
	Health   Health
	NextEval time.Time // when the health result can next change by itself; zero if never
	Events   []Event   // the events recorded (deep work expiry, health transition)
}

// SweepLiveness re-evaluates agent a's liveness at now inside tx (the
// orchestrator's per-agent health step): it expires a strict declaration
// past its end, records the health transition, if any, as an event and
// saves the state with its next evaluation instant.
func (s *Service) SweepLiveness(tx Tx, a *Agent, now time.Time) (LivenessSweep, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return LivenessSweep{}, err
	}
	return s.persistLivenessSweep(tx, st, now, s.locale(a), nil)
}

// PeekLiveness evaluates agent a's liveness at now without writing
// anything: the state as stored, its health and next evaluation instant.
func (s *Service) PeekLiveness(tx Tx, a *Agent, now time.Time) (LivenessSweep, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return LivenessSweep{}, err
	}
	h, next := EvaluateHealth(*st, now, s.cfg.Health, s.locale(a))
	return LivenessSweep{State: st, Health: h, NextEval: next}, nil
}

// AgentHealth is an agent's health report (GetAgentHealth, hubctl health).
type AgentHealth struct {
	Agent             string
	Health            Health
	Presence          PresenceState
	LastActivityAt    time.Time // last conscious activity: log or checkpoint
	LastActivityLogAt time.Time
	LastCheckpointAt  time.Time
	LastReflectionAt  time.Time
	LastSeenAt        time.Time
	DeepWork          *DeepWork // the declaration in force, or one past its end
	ReflectionDue     bool
	EvaluatedAt       time.Time
}

// AgentHealth evaluates the named agent's health now. Errors: EINVALID,
// ENOTFOUND.
func (s *Service) AgentHealth(ctx context.Context, name string) (*AgentHealth, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	var r *AgentHealth
	err := s.store.View(ctx, func(tx Tx) error {
		a, err := tx.AgentByName(name)
		if err != nil {
			return err
		}
		r, err = s.agentHealth(tx, a)
		return err
	})
	return r, err
}

// AgentHealthOf evaluates agent a's health now (for agent views).
func (s *Service) AgentHealthOf(ctx context.Context, a *Agent) (*AgentHealth, error) {
	var r *AgentHealth
	err := s.store.View(ctx, func(tx Tx) (err error) {
		r, err = s.agentHealth(tx, a)
		return err
	})
	return r, err
}

func (s *Service) agentHealth(tx Tx, a *Agent) (*AgentHealth, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	h, _ := EvaluateHealth(*st, now, s.cfg.Health, s.locale(a))
	lastCall, _ := s.presence.LastCall(a.ID)
	seen := a.LastSeenAt
	if lastCall.After(seen) {
		seen = lastCall
	}
	r := &AgentHealth{
		Agent:             a.Name,
		Health:            h,
		Presence:          DecidePresence(seen, s.waiters.AgentCount(a.ID), now, s.cfg.Health),
		LastActivityLogAt: st.LastActivityLogAt,
		LastCheckpointAt:  st.LastCheckpointAt,
		LastReflectionAt:  st.LastReflectionAt,
		LastSeenAt:        seen,
		DeepWork:          deepWorkView(st.ActiveDeepWork, now),
		ReflectionDue:     st.ReflectionDue,
		EvaluatedAt:       now,
	}
	if !st.LastActivityLogAt.IsZero() || !st.LastCheckpointAt.IsZero() {
		r.LastActivityAt = st.LastConsciousActivity()
	}
	return r, nil
}

// ListEventsRequest is the input of ListEvents. Zero fields match all.
type ListEventsRequest struct {
	Agent   string
	Kind    string
	Since   time.Time
	AfterID string
	Limit   int
}

var eventKindRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ListEvents returns stored events in ID order: the newest Limit (default
// 50), or the first Limit after AfterID. Errors: EINVALID, ENOTFOUND
// (agent).
func (s *Service) ListEvents(ctx context.Context, req ListEventsRequest) ([]*Event, error) {
	q := EventQuery{Kind: EventKind(req.Kind), Since: req.Since}
	var err error
	if q.AfterID, err = ParseMessageID("after_id", req.AfterID); err != nil {
		return nil, err
	}
	if q.Limit, err = s.limit(req.Limit, 50); err != nil {
		return nil, err
	}
	if req.Kind != "" && !eventKindRE.MatchString(req.Kind) {
		return nil, Errorf(EINVALID, "kind %q is not an event kind: expected a lower-case word such as health_changed, deep_work_started, reflection_skipped", req.Kind)
	}
	if req.Agent != "" {
		if err := ValidateAgentName(req.Agent); err != nil {
			return nil, err
		}
	}
	var evs []*Event
	err = s.store.View(ctx, func(tx Tx) error {
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		evs, err = tx.ListEvents(q)
		return err
	})
	return evs, err
}

// ListDeepWorkRequest is the input of ListDeepWork. Zero fields match all.
type ListDeepWorkRequest struct {
	Agent string
	State string
	Limit int
}

// ListDeepWork returns declarations, newest first (admin view). Errors:
// EINVALID, ENOTFOUND (agent).
func (s *Service) ListDeepWork(ctx context.Context, req ListDeepWorkRequest) ([]*DeepWork, error) {
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
	err = s.store.View(ctx, func(tx Tx) error {
		if req.Agent != "" {
			a, err := tx.AgentByName(req.Agent)
			if err != nil {
				return err
			}
			q.AgentID = a.ID
		}
		ds, err := tx.ListDeepWork(q)
		for _, d := range ds {
			out = append(out, deepWorkView(d, now))
		}
		return err
	})
	return out, err
}

// RecordEvent stores an event in tx (for the other slices: nudges, pulses,
// cron). agentID 0 makes it hub-wide.
func (s *Service) RecordEvent(tx Tx, agentID int64, kind EventKind, detail string, at time.Time) error {
	return tx.InsertEvent(&Event{AgentID: agentID, Kind: kind, Detail: detail, CreatedAt: at})
}

// LivenessTickStats reports one TickLiveness.
type LivenessTickStats struct {
	Evaluated int // agents whose evaluation was due
	Events    int // events recorded
}

// livenessBatch is how many due agents one TickLiveness transaction handles.
const livenessBatch = 500

// TickLiveness is a complete health step (SPEC §6.2) for an orchestrator
// without its own per-agent schedule: it runs SweepLiveness for every agent
// whose next evaluation instant has come (an indexed query on
// liveness.next_eval_at, not a scan), in transactions of up to 500 agents.
func (s *Service) TickLiveness(ctx context.Context) (LivenessTickStats, error) {
	var stats LivenessTickStats
	now := s.clock.Now()
	for {
		var ids []int64
		if err := s.store.View(ctx, func(tx Tx) (err error) {
			ids, err = tx.DueLiveness(now, livenessBatch)
			return err
		}); err != nil {
			return stats, err
		}
		if len(ids) == 0 {
			return stats, nil
		}
		var batch LivenessTickStats
		err := s.store.Update(ctx, func(tx Tx) error {
			batch = LivenessTickStats{}
			for _, id := range ids {
				a, err := tx.AgentByID(id)
				if ErrorCode(err) == ENOTFOUND {
					continue
				} else if err != nil {
					return err
				}
				sw, err := s.SweepLiveness(tx, a, now)
				if err != nil {
					return err
				}
				batch.Evaluated++
				batch.Events += len(sw.Events)
			}
			return nil
		})
		if err != nil {
			return stats, err
		}
		stats.Evaluated += batch.Evaluated
		stats.Events += batch.Events
		if len(ids) < livenessBatch {
			return stats, nil
		}
	}
}
