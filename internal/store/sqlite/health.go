package sqlite

import (
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.HealthTx's writes of liveness states (storesql
// its reads), in multi-row statements (execRows).

// livenessInsert writes the liveness row of livenessArgs (upsert).
const livenessInsert = `INSERT INTO liveness (agent_id, created_at, last_activity_log_at, last_checkpoint_at, last_reflection_at,
		reflection_due, reflection_due_since, reflection_skipped_at, active_deep_work_id, expired_deep_work_id,
		deep_work_ended_at, health_state, health_kinds, next_eval_at)`

// livenessUpsert is the conflict clause of livenessInsert.
const livenessUpsert = ` ON CONFLICT (agent_id) DO UPDATE SET created_at = excluded.created_at,
		last_activity_log_at = excluded.last_activity_log_at, last_checkpoint_at = excluded.last_checkpoint_at,
		last_reflection_at = excluded.last_reflection_at, reflection_due = excluded.reflection_due,
		reflection_due_since = excluded.reflection_due_since, reflection_skipped_at = excluded.reflection_skipped_at,
		active_deep_work_id = excluded.active_deep_work_id, expired_deep_work_id = excluded.expired_deep_work_id,
		deep_work_ended_at = excluded.deep_work_ended_at, health_state = excluded.health_state,
		health_kinds = excluded.health_kinds, next_eval_at = excluded.next_eval_at`

// appendLivenessArgs appends the values of livenessInsert's columns for st
// to args.
func appendLivenessArgs(args []any, st *hub.LivenessState, nextEvalAt time.Time) []any {
	var activeID, expiredID int64
	if st.ActiveDeepWork != nil {
		activeID = st.ActiveDeepWork.ID
	}
	if st.ExpiredDeepWork != nil {
		expiredID = st.ExpiredDeepWork.ID
	}
	var kinds string
	switch len(st.HealthKinds) {
	case 0:
	case 1:
		kinds = string(st.HealthKinds[0])
	default:
		var b strings.Builder
		for i, k := range st.HealthKinds {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(string(k))
		}
		kinds = b.String()
	}
	due := 0
	if st.ReflectionDue {
		due = 1
	}
	healthState := string(st.HealthState)
	if healthState == "" {
		healthState = string(hub.HealthHealthy)
	}
	return append(args, st.AgentID, row.Nanos(st.CreatedAt), row.Nanos(st.LastActivityLogAt), row.Nanos(st.LastCheckpointAt), row.Nanos(st.LastReflectionAt),
		due, row.Nanos(st.ReflectionDueSince), row.Nanos(st.ReflectionSkippedAt), activeID, expiredID,
		row.Nanos(st.DeepWorkEndedAt), healthState, kinds, row.Nanos(nextEvalAt))
}

// SaveLivenessState implements hub.HealthTx.
func (t *Tx) SaveLivenessState(st *hub.LivenessState, nextEvalAt time.Time) error {
	_, err := t.exec(livenessInsert+` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+livenessUpsert, appendLivenessArgs(make([]any, 0, 14), st, nextEvalAt)...)
	if err != nil {
		return fmt.Errorf("save liveness state: %w", err)
	}
	return nil
}

// SetNextEvals implements hub.HealthTx.
func (t *Tx) SetNextEvals(evals []hub.AgentTime) error {
	args := make([]any, 0, 2*len(evals))
	for _, e := range evals {
		args = append(args, e.AgentID, row.Nanos(e.At))
	}
	return t.execRows("set next evaluations", `UPDATE liveness SET next_eval_at = v.column2 FROM (VALUES `,
		`) AS v WHERE liveness.agent_id = v.column1`, 2, args, nil)
}

// SaveLivenessStates implements hub.HealthTx.
func (t *Tx) SaveLivenessStates(sts []*hub.LivenessState, next []time.Time) error {
	args := make([]any, 0, 14*len(sts))
	for i, st := range sts {
		args = appendLivenessArgs(args, st, next[i])
	}
	return t.execRows("save liveness states", livenessInsert+` VALUES `, livenessUpsert, 14, args, nil)
}
