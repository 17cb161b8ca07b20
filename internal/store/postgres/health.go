package postgres

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.HealthTx's writes of liveness states (storesql
// its reads): rows to write are bound as one array per column expanded by
// unnest, so every statement has a constant text whatever the batch size.

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
