package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// This file implements hub.LivenessTx (migration 0002_liveness.sql).

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
	st.CreatedAt, st.LastActivityLogAt, st.LastCheckpointAt = fromNanos(r.created), fromNanos(r.lastLog), fromNanos(r.lastCP)
	st.LastReflectionAt, st.ReflectionDue, st.ReflectionDueSince = fromNanos(r.lastRefl), r.due != 0, fromNanos(r.dueSince)
	st.ReflectionSkippedAt, st.DeepWorkEndedAt = fromNanos(r.skipped), fromNanos(r.dwEnded)
	st.HealthState = hub.HealthState(r.healthState)
	if r.healthKinds != "" {
		for _, k := range strings.Split(r.healthKinds, ",") {
			st.HealthKinds = append(st.HealthKinds, hub.FindingKind(k))
		}
	}
	return st
}

// LivenessState implements hub.LivenessTx.
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
		if st.ActiveDeepWork, err = t.deepWorkByID(r.activeID); err != nil {
			return nil, err
		}
		if !st.ActiveDeepWork.IsActive() { // closed by hand: never considered again
			st.ActiveDeepWork = nil
		}
	}
	if r.expiredID != 0 {
		if st.ExpiredDeepWork, err = t.deepWorkByID(r.expiredID); err != nil {
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

// livenessArgs returns the values of livenessInsert's columns for st.
func livenessArgs(st *hub.LivenessState, nextEvalAt time.Time) []any {
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
	due := 0
	if st.ReflectionDue {
		due = 1
	}
	healthState := string(st.HealthState)
	if healthState == "" {
		healthState = string(hub.HealthHealthy)
	}
	return []any{st.AgentID, toNanos(st.CreatedAt), toNanos(st.LastActivityLogAt), toNanos(st.LastCheckpointAt), toNanos(st.LastReflectionAt),
		due, toNanos(st.ReflectionDueSince), toNanos(st.ReflectionSkippedAt), activeID, expiredID,
		toNanos(st.DeepWorkEndedAt), healthState, strings.Join(kinds, ","), toNanos(nextEvalAt)}
}

// SaveLivenessState implements hub.LivenessTx.
func (t *Tx) SaveLivenessState(st *hub.LivenessState, nextEvalAt time.Time) error {
	_, err := t.exec(livenessInsert+` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+livenessUpsert, livenessArgs(st, nextEvalAt)...)
	if err != nil {
		return fmt.Errorf("save liveness state: %w", err)
	}
	return nil
}

// DueLiveness implements hub.LivenessTx.
func (t *Tx) DueLiveness(now time.Time, limit int) ([]int64, error) {
	ids, err := queryColumn[int64](t, `SELECT l.agent_id FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due liveness: %w", err)
	}
	return ids, nil
}

// InsertActivityLog implements hub.LivenessTx.
func (t *Tx) InsertActivityLog(l *hub.ActivityLog) error {
	content, err := jsonList(l.Content)
	if err != nil {
		return err
	}
	tags, err := jsonList(l.Tags)
	if err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		l.AgentID, string(l.Type), l.Title, content, tags, l.UrgentReason, l.HeartbeatID, toNanos(l.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	l.ID, err = res.LastInsertId()
	return err
}

// InsertCheckpoint implements hub.LivenessTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	res, err := t.exec(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at) VALUES (?, ?, ?, ?)`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, toNanos(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	c.ID, err = res.LastInsertId()
	return err
}

const deepWorkColumns = `d.id, d.agent_id, a.name, d.mode, d.planned_activity, d.heartbeat_id, d.started_at, d.ends_at,
	d.state, d.ended_at, d.end_reason`

func scanDeepWork(s scanner) (*hub.DeepWork, error) {
	var d hub.DeepWork
	var mode, state, reason string
	var started, ends, ended int64
	if err := s.Scan(&d.ID, &d.AgentID, &d.AgentName, &mode, &d.PlannedActivity, &d.HeartbeatID, &started, &ends,
		&state, &ended, &reason); err != nil {
		return nil, err
	}
	d.Mode, d.State, d.EndReason = hub.DeepWorkMode(mode), hub.DeepWorkState(state), hub.DeepWorkEnd(reason)
	d.StartedAt, d.EndsAt, d.EndedAt = fromNanos(started), fromNanos(ends), fromNanos(ended)
	return &d, nil
}

func (t *Tx) deepWorkByID(id int64) (*hub.DeepWork, error) {
	d, err := scanDeepWork(t.queryRow(`SELECT `+deepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.Errorf(hub.ENOTFOUND, "no deep work declaration %d", id)
	}
	return d, err
}

// InsertDeepWork implements hub.LivenessTx.
func (t *Tx) InsertDeepWork(d *hub.DeepWork) error {
	res, err := t.exec(`INSERT INTO deep_work (agent_id, mode, planned_activity, heartbeat_id, started_at, ends_at, state, ended_at, end_reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.AgentID, string(d.Mode), d.PlannedActivity, d.HeartbeatID, toNanos(d.StartedAt), toNanos(d.EndsAt),
		string(d.State), toNanos(d.EndedAt), string(d.EndReason))
	if hub.ErrorCode(err) == hub.ECONFLICT {
		return hub.Errorf(hub.ECONFLICT, "the agent already has an active deep work declaration")
	} else if err != nil {
		return fmt.Errorf("insert deep work: %w", err)
	}
	d.ID, err = res.LastInsertId()
	return err
}

// UpdateDeepWork implements hub.LivenessTx.
func (t *Tx) UpdateDeepWork(d *hub.DeepWork) error {
	res, err := t.exec(`UPDATE deep_work SET state = ?, ended_at = ?, end_reason = ? WHERE id = ?`,
		string(d.State), toNanos(d.EndedAt), string(d.EndReason), d.ID)
	if err != nil {
		return fmt.Errorf("update deep work: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no deep work declaration %d", d.ID)
	}
	return nil
}

// ListDeepWork implements hub.LivenessTx.
func (t *Tx) ListDeepWork(q hub.DeepWorkQuery) ([]*hub.DeepWork, error) {
	var where []string
	var args []any
	if q.AgentID != 0 {
		where, args = append(where, "d.agent_id = ?"), append(args, q.AgentID)
	}
	if q.State != "" {
		where, args = append(where, "d.state = ?"), append(args, string(q.State))
	}
	query := `SELECT ` + deepWorkColumns + ` FROM deep_work d JOIN agents a ON a.id = d.agent_id`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY d.id DESC`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("list deep work: %w", err)
	}
	defer rows.Close()
	var out []*hub.DeepWork
	for rows.Next() {
		d, err := scanDeepWork(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// InsertEvent implements hub.LivenessTx.
func (t *Tx) InsertEvent(e *hub.Event) error {
	var agent any
	if e.AgentID != 0 {
		agent = e.AgentID
	}
	res, err := t.exec(`INSERT INTO events (agent_id, kind, detail, created_at) VALUES (?, ?, ?, ?)`,
		agent, string(e.Kind), e.Detail, toNanos(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	e.ID, err = res.LastInsertId()
	return err
}

// ListEvents implements hub.LivenessTx.
func (t *Tx) ListEvents(q hub.EventQuery) ([]*hub.Event, error) {
	var where []string
	var args []any
	if q.AgentID != 0 {
		where, args = append(where, "e.agent_id = ?"), append(args, q.AgentID)
	}
	if q.Kind != "" {
		where, args = append(where, "e.kind = ?"), append(args, string(q.Kind))
	}
	if !q.Since.IsZero() {
		where, args = append(where, "e.created_at >= ?"), append(args, q.Since.UnixNano())
	}
	if q.AfterID > 0 {
		where, args = append(where, "e.id > ?"), append(args, q.AfterID)
	}
	query := `SELECT e.id, COALESCE(e.agent_id, 0), COALESCE(a.name, ''), e.kind, e.detail, e.created_at
		FROM events e LEFT JOIN agents a ON a.id = e.agent_id`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	newestFirst := q.AfterID == 0
	if newestFirst {
		query += ` ORDER BY e.id DESC`
	} else {
		query += ` ORDER BY e.id`
	}
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []*hub.Event
	for rows.Next() {
		var e hub.Event
		var kind string
		var created int64
		if err := rows.Scan(&e.ID, &e.AgentID, &e.AgentName, &kind, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.Kind, e.CreatedAt = hub.EventKind(kind), fromNanos(created)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if newestFirst {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}
