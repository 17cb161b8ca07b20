package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.HealthTx: the per-agent liveness state the
// health rules read and write, and the batched reads and writes of the
// orchestrator's health sweep. Lists of IDs are bound as one array
// (= ANY($1)) and rows to write as one array per column expanded by
// unnest, so every statement has a constant text whatever the batch size.

// livenessColumns are the columns of a liveness row that livenessRow scans.
const livenessColumns = `l.created_at, l.last_activity_log_at, l.last_checkpoint_at, l.last_reflection_at,
	l.reflection_due, l.reflection_due_since, l.reflection_skipped_at, l.active_deep_work_id, l.expired_deep_work_id,
	l.deep_work_ended_at, l.health_state, l.health_kinds`

// livenessRow is one liveness row as scanned: the state without its
// declarations, which are stored by ID.
type livenessRow struct {
	created, lastLog, lastCP, lastRefl, dueSince int64
	skipped, dwEnded                             int64
	due                                          bool
	activeID, expiredID                          int64
	healthState                                  string
	healthKinds                                  []string
}

// dest returns the scan destinations of livenessColumns.
func (r *livenessRow) dest() []any {
	return []any{&r.created, &r.lastLog, &r.lastCP, &r.lastRefl, &r.due, &r.dueSince, &r.skipped,
		&r.activeID, &r.expiredID, &r.dwEnded, &r.healthState, &r.healthKinds}
}

// state returns the row as agent agentID's state, without declarations.
func (r *livenessRow) state(agentID int64) *hub.LivenessState {
	st := &hub.LivenessState{AgentID: agentID}
	st.CreatedAt, st.LastActivityLogAt, st.LastCheckpointAt = row.Time(r.created), row.Time(r.lastLog), row.Time(r.lastCP)
	st.LastReflectionAt, st.ReflectionDue, st.ReflectionDueSince = row.Time(r.lastRefl), r.due, row.Time(r.dueSince)
	st.ReflectionSkippedAt, st.DeepWorkEndedAt = row.Time(r.skipped), row.Time(r.dwEnded)
	st.HealthState = hub.HealthState(r.healthState)
	for _, k := range r.healthKinds {
		st.HealthKinds = append(st.HealthKinds, hub.FindingKind(k))
	}
	return st
}

// LivenessState implements hub.HealthTx.
func (t *Tx) LivenessState(agentID int64) (*hub.LivenessState, error) {
	var r livenessRow
	err := t.queryRow(`SELECT `+livenessColumns+` FROM liveness l WHERE l.agent_id = $1`, agentID).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		a, err := t.AgentByID(agentID)
		if err != nil {
			return nil, err
		}
		st := hub.NewLivenessState(a.ID, a.CreatedAt)
		return &st, nil
	} else if err != nil {
		return nil, fmt.Errorf("read liveness state: %w", err)
	}
	d := r.declared(agentID)
	if err := t.loadDeclarations([]*row.Declared{d}); err != nil {
		return nil, err
	}
	return d.State, nil
}

// declared returns the row as agent agentID's state, with the IDs of the
// declarations still to load.
func (r *livenessRow) declared(agentID int64) *row.Declared {
	return &row.Declared{State: r.state(agentID), ActiveID: r.activeID, ExpiredID: r.expiredID}
}

// loadDeclarations sets the declarations of each state, with one read for
// all of them (row.Attach).
func (t *Tx) loadDeclarations(ds []*row.Declared) error {
	dws, err := t.DeepWorks(row.DeclarationIDs(ds))
	if err != nil {
		return err
	}
	row.Attach(ds, dws)
	return nil
}

// livenessUpsert writes the rows of the arrays of livenessArrays.
const livenessUpsert = `INSERT INTO liveness (agent_id, created_at, last_activity_log_at, last_checkpoint_at, last_reflection_at,
		reflection_due, reflection_due_since, reflection_skipped_at, active_deep_work_id, expired_deep_work_id,
		deep_work_ended_at, health_state, health_kinds, next_eval_at)
	SELECT agent_id, created_at, last_log, last_cp, last_refl, due, due_since, skipped, active_id, expired_id,
		dw_ended, health_state, health_kinds::text[], next_eval_at
	FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::bigint[],
		$8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::bigint[])
		AS v(agent_id, created_at, last_log, last_cp, last_refl, due, due_since, skipped, active_id, expired_id,
			dw_ended, health_state, health_kinds, next_eval_at)
	ON CONFLICT (agent_id) DO UPDATE SET created_at = excluded.created_at,
		last_activity_log_at = excluded.last_activity_log_at, last_checkpoint_at = excluded.last_checkpoint_at,
		last_reflection_at = excluded.last_reflection_at, reflection_due = excluded.reflection_due,
		reflection_due_since = excluded.reflection_due_since, reflection_skipped_at = excluded.reflection_skipped_at,
		active_deep_work_id = excluded.active_deep_work_id, expired_deep_work_id = excluded.expired_deep_work_id,
		deep_work_ended_at = excluded.deep_work_ended_at, health_state = excluded.health_state,
		health_kinds = excluded.health_kinds, next_eval_at = excluded.next_eval_at`

// livenessArrays holds the columns of livenessUpsert, one element per state.
type livenessArrays struct {
	agent, created, lastLog, lastCP, lastRefl []int64
	due                                       []bool
	dueSince, skipped, active, expired, ended []int64
	health, kinds                             []string
	next                                      []int64
}

func (a *livenessArrays) add(st *hub.LivenessState, nextEvalAt time.Time) {
	var activeID, expiredID int64
	if st.ActiveDeepWork != nil {
		activeID = st.ActiveDeepWork.ID
	}
	if st.ExpiredDeepWork != nil {
		expiredID = st.ExpiredDeepWork.ID
	}
	kinds := make([]string, len(st.HealthKinds))
	for i, k := range st.HealthKinds {
		kinds[i] = string(k)
	}
	health := string(st.HealthState)
	if health == "" {
		health = string(hub.HealthHealthy)
	}
	a.agent, a.created = append(a.agent, st.AgentID), append(a.created, row.Nanos(st.CreatedAt))
	a.lastLog, a.lastCP = append(a.lastLog, row.Nanos(st.LastActivityLogAt)), append(a.lastCP, row.Nanos(st.LastCheckpointAt))
	a.lastRefl, a.due = append(a.lastRefl, row.Nanos(st.LastReflectionAt)), append(a.due, st.ReflectionDue)
	a.dueSince, a.skipped = append(a.dueSince, row.Nanos(st.ReflectionDueSince)), append(a.skipped, row.Nanos(st.ReflectionSkippedAt))
	a.active, a.expired = append(a.active, activeID), append(a.expired, expiredID)
	a.ended, a.health = append(a.ended, row.Nanos(st.DeepWorkEndedAt)), append(a.health, health)
	a.kinds, a.next = append(a.kinds, arrayLiteral(kinds)), append(a.next, row.Nanos(nextEvalAt))
}

func (a *livenessArrays) args() []any {
	return []any{a.agent, a.created, a.lastLog, a.lastCP, a.lastRefl, a.due, a.dueSince, a.skipped,
		a.active, a.expired, a.ended, a.health, a.kinds, a.next}
}

// SaveLivenessState implements hub.HealthTx.
func (t *Tx) SaveLivenessState(st *hub.LivenessState, nextEvalAt time.Time) error {
	return t.SaveLivenessStates([]*hub.LivenessState{st}, []time.Time{nextEvalAt})
}

// SaveLivenessStates implements hub.HealthTx.
func (t *Tx) SaveLivenessStates(sts []*hub.LivenessState, next []time.Time) error {
	if len(sts) == 0 {
		return nil
	}
	// One row per agent, the last given (an upsert may not touch a row twice).
	last := make(map[int64]int, len(sts))
	for i, st := range sts {
		last[st.AgentID] = i
	}
	var a livenessArrays
	for i, st := range sts {
		if last[st.AgentID] == i {
			a.add(st, next[i])
		}
	}
	if _, err := t.exec(livenessUpsert, a.args()...); err != nil {
		return fmt.Errorf("save liveness state: %w", err)
	}
	return nil
}

// DueLiveness implements hub.HealthTx.
func (t *Tx) DueLiveness(now time.Time, limit int) ([]int64, error) {
	ids, err := queryColumn[int64](t, `SELECT l.agent_id FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= $1 AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT $2`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due liveness: %w", err)
	}
	return ids, nil
}

// DueHealth implements hub.HealthTx.
func (t *Tx) DueHealth(now time.Time, limit int) ([]hub.AgentLiveness, error) {
	rows, err := t.query(`SELECT `+row.AgentColumnsA+`, `+livenessColumns+` FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= $1 AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT $2`, row.Nanos(now), limit)
	var as []*hub.Agent
	var r livenessRow
	scan := row.NewAgentScan(r.dest()...)
	ls, err := scanRows(rows, err, func(rs pgx.Rows) (*row.Declared, error) {
		a, err := scan.Scan(rs)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
		return r.declared(a.ID), nil
	})
	if err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	if err := t.loadDeclarations(ls); err != nil {
		return nil, err
	}
	out := make([]hub.AgentLiveness, len(as))
	for i, a := range as {
		out[i] = hub.AgentLiveness{Agent: a, State: ls[i].State, Stale: ls[i].Stale}
	}
	return out, nil
}

// agentTimes splits evals into agent IDs and instants (nanoseconds, at
// least floor).
func agentTimes(evals []hub.AgentTime, floor int64) (ids, at []int64) {
	ids, at = make([]int64, len(evals)), make([]int64, len(evals))
	for i, e := range evals {
		ids[i], at[i] = e.AgentID, max(row.Nanos(e.At), floor)
	}
	return ids, at
}

// SetNextEvals implements hub.HealthTx.
func (t *Tx) SetNextEvals(evals []hub.AgentTime) error {
	if len(evals) == 0 {
		return nil
	}
	ids, at := agentTimes(evals, 0)
	_, err := t.exec(`UPDATE liveness SET next_eval_at = v.at FROM unnest($1::bigint[], $2::bigint[]) AS v(id, at)
		WHERE liveness.agent_id = v.id`, ids, at)
	if err != nil {
		return fmt.Errorf("set next evaluations: %w", err)
	}
	return nil
}
