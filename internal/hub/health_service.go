package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The health sweep. Every liveness write stores the instant at which the
// agent's health can next change by itself (EvaluateHealth's second
// result, liveness.next_eval_at); SweepHealth takes the agents whose
// instant has come, through an index, so a tick costs the same whatever the
// number of agents. It handles a batch in one write transaction: the due
// query reads the agents' rows with it, the rules run in Go, and what every
// agent needs written (next evaluation instants, events) goes back in one
// statement each; only the rare per-agent changes (a health transition, an
// expired declaration) are written row by row. If the batch fails, it is
// retried one agent at a time, each in its own write (sweepHealthEach), so
// that one agent whose rows cannot be read or written does not hold up the
// others.

// callerLivenessTx is what callerLiveness reads and writes.
type callerLivenessTx interface {
	// HealthTx
	AgentLiveness(agentID int64) (*Agent, *LivenessState, error)
}

// callerLiveness loads an agent, its liveness state and its locale: the
// start of every liveness call that writes (logs, checkpoints, deep work).
func (s *Liveness) callerLiveness(tx callerLivenessTx, agentID int64) (*Agent, *LivenessState, Locale, error) {
	a, st, err := tx.AgentLiveness(agentID)
	if err != nil {
		return nil, nil, "", err
	}
	return a, st, s.locale(a), nil
}

// HealthTx stores each agent's liveness state and the instant its health is next
// evaluated. The due queries are served by an index on that instant, so a
// sweep costs the same whatever the number of agents.
type HealthTx interface {
	// LivenessState returns the agent's liveness state with its active and
	// expired declarations loaded. An agent without a stored state (created
	// before the liveness schema) gets NewLivenessState(id, created_at).
	// ENOTFOUND if there is no such agent.
	LivenessState(agentID int64) (*LivenessState, error)
	// AgentLiveness returns the agent (AgentByID) and its liveness state
	// (LivenessState) in one read. ENOTFOUND.
	AgentLiveness(agentID int64) (*Agent, *LivenessState, error)
	// SaveLivenessState writes st (the declarations by ID only: write them
	// with InsertDeepWork/UpdateDeepWork) and the instant of its next
	// evaluation, zero for none.
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
	// DueLiveness returns the IDs of enabled agents whose next evaluation is
	// at or before now, earliest first, at most limit.
	DueLiveness(now time.Time, limit int) ([]int64, error)
	// DueHealth returns up to limit enabled agents whose next health
	// evaluation is due at now, earliest first (the agents DueLiveness
	// returns), each with its liveness state as LivenessState returns it.
	// ENOTFOUND when a state names a declaration that does not exist.
	DueHealth(now time.Time, limit int) ([]AgentLiveness, error)
	// SetNextEvals sets the next evaluation instant of each agent's stored
	// liveness state, leaving the rest of the state as it is.
	SetNextEvals(evals []AgentTime) error
	// SaveLivenessStates does SaveLivenessState(sts[i], next[i]) for each i.
	SaveLivenessStates(sts []*LivenessState, next []time.Time) error
	// OverviewRows returns agents with what their overviews are made of,
	// in one read whatever their number: with all, every agent (disabled
	// ones too) by name; otherwise those of ids that exist, in no set
	// order.
	OverviewRows(all bool, ids []int64) ([]OverviewRow, error)
}

// OverviewRow is an agent with its stored liveness state, as LivenessState
// returns it, and its inbox counters for its own read cursor, as
// InboxCounts(ID, ReadUpTo) returns them (HealthTx.OverviewRows).
type OverviewRow struct {
	Agent            *Agent
	State            *LivenessState
	Unread, Mentions int64
}

// saveLivenessStateTx writes an agent's liveness state.
type saveLivenessStateTx interface {
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
}

// createHealth stores a new agent's liveness state.
func (s *core) createHealth(tx saveLivenessStateTx, a *Agent) error {
	st := NewLivenessState(a.ID, a.CreatedAt)
	_, next := EvaluateHealth(st, a.CreatedAt, s.cfg.Health, s.locale(a))
	return tx.SaveLivenessState(&st, next)
}

// persistLivenessTx is what persistLiveness reads and writes.
type persistLivenessTx interface {
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
}

// persistLiveness finishes every liveness write: it expires a strict
// declaration past its end, writes the declarations that changed, evaluates
// health, records the events (the given ones, then a health transition) and
// saves the state with its next evaluation time. It returns how many events
// it recorded.
func (s *Liveness) persistLiveness(tx persistLivenessTx, st *LivenessState, now time.Time, loc Locale, events []Event, changed ...*DeepWork) (int, error) {
	if exp, evs := ExpireDeepWork(st, now, loc); exp != nil {
		changed = append(changed, exp)
		events = append(events, evs...)
	}
	for _, d := range changed {
		if d != nil {
			if err := tx.UpdateDeepWork(d); err != nil {
				return 0, err
			}
		}
	}
	h, next := EvaluateHealth(*st, now, s.cfg.Health, loc)
	events = append(events, RecordHealth(st, h, now, loc)...)
	for i := range events {
		if err := tx.InsertEvent(&events[i]); err != nil {
			return 0, err
		}
	}
	if err := tx.SaveLivenessState(st, next); err != nil {
		return 0, err
	}
	return len(events), nil
}

// sweepAgentTx is what sweepAgent reads and writes.
type sweepAgentTx interface {
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	SaveLivenessState(st *LivenessState, nextEvalAt time.Time) error
}

// sweepAgent re-evaluates agent a's liveness at now inside tx, as
// SweepHealth does for each due agent: it expires a strict declaration
// past its end, records the health transition, if any, as an event and
// saves the state with its next evaluation instant. It returns how many
// events it recorded.
func (s *Liveness) sweepAgent(tx sweepAgentTx, a *Agent, now time.Time) (int, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return 0, err
	}
	return s.persistLiveness(tx, st, now, s.locale(a), nil)
}

// AgentHealth is an agent's health report, as the admin reads it.
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
func (s *Liveness) AgentHealth(ctx context.Context, name string) (*AgentHealth, error) {
	if err := ValidateAgentName(name); err != nil {
		return nil, err
	}
	var r *AgentHealth
	err := view(ctx, s.store, func(tx livenessTx) error {
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
func (s *Liveness) AgentHealthOf(ctx context.Context, a *Agent) (*AgentHealth, error) {
	var r *AgentHealth
	err := view(ctx, s.store, func(tx livenessTx) (err error) {
		r, err = s.agentHealth(tx, a)
		return err
	})
	return r, err
}

func (s *Liveness) agentHealth(tx livenessStateTx, a *Agent) (*AgentHealth, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return nil, err
	}
	return s.healthOf(a, st, s.clock.Now()), nil
}

// healthOf evaluates agent a's health at now from its liveness state st.
func (s *Liveness) healthOf(a *Agent, st *LivenessState, now time.Time) *AgentHealth {
	h, _ := EvaluateHealth(*st, now, s.cfg.Health, s.locale(a))
	pr := s.presenceAt(a, now)
	r := &AgentHealth{
		Agent:             a.Name,
		Health:            h,
		Presence:          pr.State,
		LastActivityLogAt: st.LastActivityLogAt,
		LastCheckpointAt:  st.LastCheckpointAt,
		LastReflectionAt:  st.LastReflectionAt,
		LastSeenAt:        pr.LastSeenAt,
		DeepWork:          deepWorkView(st.ActiveDeepWork, now),
		ReflectionDue:     st.ReflectionDue,
		EvaluatedAt:       now,
	}
	if !st.LastActivityLogAt.IsZero() || !st.LastCheckpointAt.IsZero() {
		r.LastActivityAt = st.LastConsciousActivity()
	}
	return r
}

// SweepHealth re-evaluates up to limit agents whose next health evaluation
// is due at now, as sweepAgent does for each (a strict deep work past
// its end is expired, a changed health is recorded, the next evaluation
// time stored). It returns how many agents were evaluated and how many
// events were recorded; more is true when the batch was full.
func (s *Liveness) SweepHealth(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error) {
	if ok, err := anyDue(ctx, s.store, func(tx livenessTx) ([]int64, error) { return tx.DueLiveness(now, 1) }); !ok || err != nil {
		return 0, 0, false, err
	}
	var b sweptBatch
	err = update(ctx, s.store, func(tx livenessTx) (err error) {
		b, err = s.SweepBatch(tx, now, limit)
		return err
	})
	if err == nil {
		return b.evaluated, b.events, b.evaluated == limit, nil
	}
	if ctx.Err() != nil {
		return 0, 0, false, err
	}
	return s.sweepHealthEach(ctx, now, limit)
}

// sweptBatch is what SweepBatch did: the agents evaluated, the events
// recorded, and each agent evaluated with its liveness state as it now
// stands in the transaction, by agent ID.
type sweptBatch struct {
	evaluated, events int
	agents            map[int64]AgentLiveness
}

// sweepBatchTx is what SweepBatch reads and writes.
type sweepBatchTx interface {
	// DeepWorkTx
	UpdateDeepWork(d *DeepWork) error
	// EventTx
	InsertEvents(es []Event) error
	// HealthTx
	DueHealth(now time.Time, limit int) ([]AgentLiveness, error)
	SaveLivenessStates(sts []*LivenessState, next []time.Time) error
	SetNextEvals(evals []AgentTime) error
}

// SweepBatch is SweepHealth's work inside tx: it re-evaluates up to limit
// agents whose next health evaluation is due at now.
func (s *Liveness) SweepBatch(tx sweepBatchTx, now time.Time, limit int) (sweptBatch, error) {
	rows, err := tx.DueHealth(now, limit)
	if err != nil {
		return sweptBatch{}, err
	}
	b := sweptBatch{agents: make(map[int64]AgentLiveness, len(rows))}
	nexts, saveAt := make([]AgentTime, 0, len(rows)), make([]time.Time, 0, len(rows))
	saves, evs := make([]*LivenessState, 0, len(rows)), make([]Event, 0, len(rows))
	for _, r := range rows {
		n, changed, err := s.sweepState(tx, r, now, &evs)
		if err != nil {
			return sweptBatch{}, fmt.Errorf("health of %s: %w", r.Agent.Name, err)
		}
		if changed {
			saves, saveAt = append(saves, r.State), append(saveAt, n.At)
		} else {
			nexts = append(nexts, n)
		}
		b.agents[r.Agent.ID] = r
	}
	if err := tx.InsertEvents(evs); err != nil {
		return sweptBatch{}, err
	}
	if err := tx.SaveLivenessStates(saves, saveAt); err != nil {
		return sweptBatch{}, err
	}
	if err := tx.SetNextEvals(nexts); err != nil {
		return sweptBatch{}, err
	}
	b.evaluated, b.events = len(rows), len(evs)
	return b, nil
}

// updateDeepWorkTx writes a deep work declaration.
type updateDeepWorkTx interface {
	UpdateDeepWork(d *DeepWork) error
}

// sweepState is sweepAgent on a state already read (r), except that
// it writes nothing but an expired declaration: the events are appended to
// evs, and n is the state's next evaluation instant; changed is true when
// the state must be saved, false when only that instant changes.
func (s *Liveness) sweepState(tx updateDeepWorkTx, r AgentLiveness, now time.Time, evs *[]Event) (n AgentTime, changed bool, err error) {
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

// sweepHealthEach is SweepHealth one agent at a time, each in its own
// write (sweepAgent): the fallback when the batch fails, so that one
// agent whose rows cannot be read or written does not hold up the others.
func (s *Liveness) sweepHealthEach(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error) {
	var ids []int64
	err = view(ctx, s.store, func(tx livenessTx) (err error) {
		ids, err = tx.DueLiveness(now, limit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, 0, false, err
	}
	var mu sync.Mutex // updateEach runs fn concurrently
	_, err = updateEach(ctx, s.store, ids, func(tx livenessTx, id int64) ([]int64, error) {
		a, err := tx.AgentByID(id)
		if ErrorCode(err) == ENOTFOUND {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		n, err := s.sweepAgent(tx, a, now)
		if err != nil {
			return nil, fmt.Errorf("health of %s: %w", a.Name, err)
		}
		mu.Lock()
		evaluated++
		events += n
		mu.Unlock()
		return nil, nil
	})
	if err != nil {
		return evaluated, events, false, err
	}
	return evaluated, events, len(ids) == limit, nil
}

// AgentLiveness is an agent with its stored liveness state (DueHealth).
type AgentLiveness struct {
	Agent *Agent
	State *LivenessState
	// Stale is true when the stored row differs from State without any
	// rule having run: it names a declaration that is no longer active
	// (closed by hand), which State leaves out. Saving State clears it.
	Stale bool
}
