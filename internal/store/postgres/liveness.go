package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.LivenessTx (migration 0002_liveness.sql).

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
	st.CreatedAt, st.LastActivityLogAt, st.LastCheckpointAt = fromNanos(r.created), fromNanos(r.lastLog), fromNanos(r.lastCP)
	st.LastReflectionAt, st.ReflectionDue, st.ReflectionDueSince = fromNanos(r.lastRefl), r.due, fromNanos(r.dueSince)
	st.ReflectionSkippedAt, st.DeepWorkEndedAt = fromNanos(r.skipped), fromNanos(r.dwEnded)
	st.HealthState = hub.HealthState(r.healthState)
	for _, k := range r.healthKinds {
		st.HealthKinds = append(st.HealthKinds, hub.FindingKind(k))
	}
	return st
}

// LivenessState implements hub.LivenessTx.
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
	l := &livenessOf{agentID: agentID, row: r, st: r.state(agentID)}
	if err := t.loadDeclarations([]*livenessOf{l}); err != nil {
		return nil, err
	}
	return l.st, nil
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
	a.agent, a.created = append(a.agent, st.AgentID), append(a.created, toNanos(st.CreatedAt))
	a.lastLog, a.lastCP = append(a.lastLog, toNanos(st.LastActivityLogAt)), append(a.lastCP, toNanos(st.LastCheckpointAt))
	a.lastRefl, a.due = append(a.lastRefl, toNanos(st.LastReflectionAt)), append(a.due, st.ReflectionDue)
	a.dueSince, a.skipped = append(a.dueSince, toNanos(st.ReflectionDueSince)), append(a.skipped, toNanos(st.ReflectionSkippedAt))
	a.active, a.expired = append(a.active, activeID), append(a.expired, expiredID)
	a.ended, a.health = append(a.ended, toNanos(st.DeepWorkEndedAt)), append(a.health, health)
	a.kinds, a.next = append(a.kinds, arrayLiteral(kinds)), append(a.next, toNanos(nextEvalAt))
}

func (a *livenessArrays) args() []any {
	return []any{a.agent, a.created, a.lastLog, a.lastCP, a.lastRefl, a.due, a.dueSince, a.skipped,
		a.active, a.expired, a.ended, a.health, a.kinds, a.next}
}

// SaveLivenessState implements hub.LivenessTx.
func (t *Tx) SaveLivenessState(st *hub.LivenessState, nextEvalAt time.Time) error {
	return t.SaveLivenessStates([]*hub.LivenessState{st}, []time.Time{nextEvalAt})
}

// SaveLivenessStates implements hub.SweepTx.
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

// DueLiveness implements hub.LivenessTx.
func (t *Tx) DueLiveness(now time.Time, limit int) ([]int64, error) {
	ids, err := queryColumn[int64](t, `SELECT l.agent_id FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= $1 AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT $2`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due liveness: %w", err)
	}
	return ids, nil
}

// InsertActivityLog implements hub.LivenessTx.
func (t *Tx) InsertActivityLog(l *hub.ActivityLog) error {
	err := t.queryRow(`INSERT INTO activity_logs (agent_id, type, title, content, tags, urgent_reason, heartbeat_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		l.AgentID, string(l.Type), l.Title, list(l.Content), list(l.Tags), l.UrgentReason, l.HeartbeatID, toNanos(l.CreatedAt)).Scan(&l.ID)
	if err != nil {
		return fmt.Errorf("insert activity log: %w", err)
	}
	return nil
}

// InsertCheckpoint implements hub.LivenessTx.
func (t *Tx) InsertCheckpoint(c *hub.Checkpoint) error {
	err := t.queryRow(`INSERT INTO checkpoints (agent_id, current_activity, heartbeat_id, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		c.AgentID, c.CurrentActivity, c.HeartbeatID, toNanos(c.CreatedAt)).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert checkpoint: %w", err)
	}
	return nil
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

// InsertDeepWork implements hub.LivenessTx.
func (t *Tx) InsertDeepWork(d *hub.DeepWork) error {
	err := t.queryRow(`INSERT INTO deep_work (agent_id, mode, planned_activity, heartbeat_id, started_at, ends_at, state, ended_at, end_reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING id`,
		d.AgentID, string(d.Mode), d.PlannedActivity, d.HeartbeatID, toNanos(d.StartedAt), toNanos(d.EndsAt),
		string(d.State), toNanos(d.EndedAt), string(d.EndReason)).Scan(&d.ID)
	if errors.Is(err, pgx.ErrNoRows) { // deep_work_one_active, without aborting the transaction
		return hub.Errorf(hub.ECONFLICT, "the agent already has an active deep work declaration")
	} else if err != nil {
		return fmt.Errorf("insert deep work: %w", err)
	}
	return nil
}

// UpdateDeepWork implements hub.LivenessTx.
func (t *Tx) UpdateDeepWork(d *hub.DeepWork) error {
	tag, err := t.exec(`UPDATE deep_work SET state = $1, ended_at = $2, end_reason = $3 WHERE id = $4`,
		string(d.State), toNanos(d.EndedAt), string(d.EndReason), d.ID)
	if err != nil {
		return fmt.Errorf("update deep work: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no deep work declaration %d", d.ID)
	}
	return nil
}

// ListDeepWork implements hub.LivenessTx.
func (t *Tx) ListDeepWork(q hub.DeepWorkQuery) ([]*hub.DeepWork, error) {
	rows, err := t.query(`SELECT `+deepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE ($1::bigint = 0 OR d.agent_id = $1) AND ($2::text = '' OR d.state = $2)
		ORDER BY d.id DESC LIMIT NULLIF($3::bigint, 0)`, q.AgentID, string(q.State), q.Limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.DeepWork, error) { return scanDeepWork(r) })
	if err != nil {
		return nil, fmt.Errorf("list deep work: %w", err)
	}
	return out, nil
}

// InsertEvent implements hub.LivenessTx.
func (t *Tx) InsertEvent(e *hub.Event) error {
	err := t.queryRow(`INSERT INTO events (agent_id, kind, detail, created_at) VALUES (NULLIF($1::bigint, 0), $2, $3, $4) RETURNING id`,
		e.AgentID, string(e.Kind), e.Detail, toNanos(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

// InsertEvents implements hub.SweepTx.
func (t *Tx) InsertEvents(es []hub.Event) error {
	if len(es) == 0 {
		return nil
	}
	agents, created := make([]int64, len(es)), make([]int64, len(es))
	kinds, details := make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		agents[i], kinds[i], details[i], created[i] = e.AgentID, string(e.Kind), e.Detail, toNanos(e.CreatedAt)
	}
	_, err := t.exec(`INSERT INTO events (agent_id, kind, detail, created_at)
		SELECT NULLIF(agent_id, 0), kind, detail, created_at
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS v(agent_id, kind, detail, created_at, n)
		ORDER BY n`, agents, kinds, details, created)
	if err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

// ListEvents implements hub.LivenessTx.
func (t *Tx) ListEvents(q hub.EventQuery) ([]*hub.Event, error) {
	var since int64
	if !q.Since.IsZero() {
		since = q.Since.UnixNano()
	}
	// Newest first unless a cursor is given; the page is then put back in
	// ID order.
	order := `e.id DESC`
	if q.AfterID > 0 {
		order = `e.id`
	}
	rows, err := t.query(`SELECT * FROM (
			SELECT e.id, COALESCE(e.agent_id, 0), COALESCE(a.name, ''), e.kind, e.detail, e.created_at
			FROM events e LEFT JOIN agents a ON a.id = e.agent_id
			WHERE ($1::bigint = 0 OR e.agent_id = $1) AND ($2::text = '' OR e.kind = $2) AND e.created_at >= $3 AND e.id > $4
			ORDER BY `+order+` LIMIT NULLIF($5::bigint, 0)
		) page ORDER BY id`, q.AgentID, string(q.Kind), since, max(q.AfterID, 0), q.Limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (*hub.Event, error) {
		var e hub.Event
		var kind string
		var created int64
		if err := r.Scan(&e.ID, &e.AgentID, &e.AgentName, &kind, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.Kind, e.CreatedAt = hub.EventKind(kind), fromNanos(created)
		return &e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
