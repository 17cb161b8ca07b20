package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func jsonList(xs []string) (string, error) {
	if len(xs) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(xs)
	return string(b), err
}

func parseJSONList(s string) ([]string, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	var xs []string
	err := json.Unmarshal([]byte(s), &xs)
	return xs, err
}

// livenessColumns are the columns of a liveness row that livenessRow scans.
const livenessColumns = `l.created_at, l.last_activity_log_at, l.last_checkpoint_at, l.last_reflection_at,
	l.reflection_due, l.reflection_due_since, l.reflection_skipped_at, l.active_deep_work_id, l.expired_deep_work_id,
	l.deep_work_ended_at, l.health_state, l.health_kinds`

// livenessRow is one liveness row as scanned: the state without its
// declarations, which are stored by ID.
type livenessRow struct {
	created, lastLog, lastCP, lastRefl, dueSince int64
	skipped, dwEnded                             int64
	due                                          int
	activeID, expiredID                          int64
	healthState, healthKinds                     string
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
	st.LastReflectionAt, st.ReflectionDue, st.ReflectionDueSince = row.Time(r.lastRefl), r.due != 0, row.Time(r.dueSince)
	st.ReflectionSkippedAt, st.DeepWorkEndedAt = row.Time(r.skipped), row.Time(r.dwEnded)
	st.HealthState = hub.HealthState(r.healthState)
	if r.healthKinds != "" {
		for _, k := range strings.Split(r.healthKinds, ",") {
			st.HealthKinds = append(st.HealthKinds, hub.FindingKind(k))
		}
	}
	return st
}

// LivenessState implements hub.HealthTx.
func (t *Tx) LivenessState(agentID int64) (*hub.LivenessState, error) {
	var r livenessRow
	err := t.queryRow(`SELECT `+livenessColumns+` FROM liveness l WHERE l.agent_id = ?`, agentID).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		a, err := t.AgentByID(agentID)
		if err != nil {
			return nil, err
		}
		st := hub.NewLivenessState(a.ID, a.CreatedAt)
		return &st, nil
	} else if err != nil {
		return nil, fmt.Errorf("read liveness state: %w", err)
	}
	st := r.state(agentID)
	if r.activeID != 0 {
		if st.ActiveDeepWork, err = t.DeepWorkByID(r.activeID); err != nil {
			return nil, err
		}
		if !st.ActiveDeepWork.IsActive() { // closed by hand: never considered again
			st.ActiveDeepWork = nil
		}
	}
	if r.expiredID != 0 {
		if st.ExpiredDeepWork, err = t.DeepWorkByID(r.expiredID); err != nil {
			return nil, err
		}
	}
	return st, nil
}

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

// DueLiveness implements hub.HealthTx.
func (t *Tx) DueLiveness(now time.Time, limit int) ([]int64, error) {
	ids, err := queryColumn[int64](t, `SELECT l.agent_id FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due liveness: %w", err)
	}
	return ids, nil
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

// DueHealth implements hub.HealthTx.
func (t *Tx) DueHealth(now time.Time, limit int) ([]hub.AgentLiveness, error) {
	rows, err := t.query(`SELECT `+row.AgentColumnsA+`, `+livenessColumns+` FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, row.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	as, ls := make([]*hub.Agent, 0, min(limit, dueRowsCap)), make([]*row.Declared, 0, min(limit, dueRowsCap))
	var r livenessRow
	scan := row.NewAgentScan(r.dest()...)
	for rows.Next() {
		a, err := scan.Scan(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		as, ls = append(as, a), append(ls, r.declared(a.ID))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
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
