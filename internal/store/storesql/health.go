package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.HealthTx's reads: the per-agent liveness state
// the health rules read, and the orchestrator's due sweep; and its writes.

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
func (r *livenessRow) dest(d Dialect) []any {
	return []any{&r.created, &r.lastLog, &r.lastCP, &r.lastRefl, &r.due, &r.dueSince, &r.skipped,
		&r.activeID, &r.expiredID, &r.dwEnded, &r.healthState, d.KindsDest(&r.healthKinds)}
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

// declared returns the row as agent agentID's state, with the IDs of the
// declarations still to load.
func (r *livenessRow) declared(agentID int64) *row.Declared {
	return &row.Declared{State: r.state(agentID), ActiveID: r.activeID, ExpiredID: r.expiredID}
}

// loadDeclarations sets the declarations of each state, with one read for
// all of them (row.Attach).
func (x Statements) loadDeclarations(ds []*row.Declared) error {
	dws, err := x.DeepWorks(row.DeclarationIDs(ds))
	if err != nil {
		return err
	}
	row.Attach(ds, dws)
	return nil
}

// LivenessState implements hub.HealthTx.
func (x Statements) LivenessState(agentID int64) (*hub.LivenessState, error) {
	var r livenessRow
	err := x.DB.QueryRow(`SELECT `+livenessColumns+` FROM liveness l WHERE l.agent_id = ?`, agentID).Scan(r.dest(x.Dialect)...)
	if x.DB.IsNoRows(err) {
		a, err := x.AgentByID(agentID)
		if err != nil {
			return nil, err
		}
		st := hub.NewLivenessState(a.ID, a.CreatedAt)
		return &st, nil
	} else if err != nil {
		return nil, fmt.Errorf("read liveness state: %w", err)
	}
	if r.activeID == 0 && r.expiredID == 0 {
		return r.state(agentID), nil
	}
	d := r.declared(agentID)
	if err := x.loadDeclarations([]*row.Declared{d}); err != nil {
		return nil, err
	}
	return d.State, nil
}

// agentLiveness is AgentLiveness's query, its text made once rather than
// at each call.
var agentLiveness = `SELECT ` + row.AgentColumnsA + `, ` + livenessColumns + ` FROM agents a JOIN liveness l ON l.agent_id = a.id
	WHERE a.id = ?`

// AgentLiveness implements hub.HealthTx: the agent's row joined to its
// liveness row, read apart only for an agent without one.
func (x Statements) AgentLiveness(agentID int64) (*hub.Agent, *hub.LivenessState, error) {
	var r livenessRow
	a, err := row.Agent(x.DB.QueryRow(agentLiveness, agentID), r.dest(x.Dialect)...)
	if x.DB.IsNoRows(err) {
		a, err := x.AgentByID(agentID)
		if err != nil {
			return nil, nil, err
		}
		st := hub.NewLivenessState(a.ID, a.CreatedAt)
		return a, &st, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("read agent and liveness state: %w", err)
	}
	if r.activeID == 0 && r.expiredID == 0 {
		return a, r.state(agentID), nil
	}
	d := r.declared(agentID)
	if err := x.loadDeclarations([]*row.Declared{d}); err != nil {
		return nil, nil, err
	}
	return a, d.State, nil
}

// DueLiveness implements hub.HealthTx.
func (x Statements) DueLiveness(now time.Time, limit int) ([]int64, error) {
	ids, err := column[int64](x.DB, `SELECT l.agent_id FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due liveness: %w", err)
	}
	return ids, nil
}

// dueRowsCap bounds the capacity a due read allocates up front for its
// rows (its limit, the batch size, when smaller).
const dueRowsCap = 1024

// DueHealth implements hub.HealthTx.
func (x Statements) DueHealth(now time.Time, limit int) ([]hub.AgentLiveness, error) {
	rows, done, err := x.DB.Query(`SELECT `+row.AgentColumnsA+`, `+livenessColumns+` FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, row.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	as, ls := make([]*hub.Agent, 0, min(limit, dueRowsCap)), make([]*row.Declared, 0, min(limit, dueRowsCap))
	var r livenessRow
	scan := row.NewAgentScan(r.dest(x.Dialect)...)
	for rows.Next() {
		a, err := scan.Scan(rows)
		if err != nil {
			done()
			return nil, fmt.Errorf("due health: %w", err)
		}
		as, ls = append(as, a), append(ls, r.declared(a.ID))
	}
	done()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	if err := x.loadDeclarations(ls); err != nil {
		return nil, err
	}
	out := make([]hub.AgentLiveness, len(as))
	for i, a := range as {
		out[i] = hub.AgentLiveness{Agent: a, State: ls[i].State, Stale: ls[i].Stale}
	}
	return out, nil
}

// nudgeLiveness sets the liveness state of each agent of byID (ids: their
// IDs), as LivenessState would, for the nudge checks of those agents.
func (x Statements) nudgeLiveness(ids []int64, byID map[int64]*hub.DueNudge) error {
	rows, done, err := x.DB.Query(`SELECT l.agent_id, `+livenessColumns+` FROM liveness l WHERE `+x.Dialect.InIDs("l.agent_id"), x.Dialect.IDs(ids))
	if err != nil {
		return fmt.Errorf("read liveness states: %w", err)
	}
	ls := make([]*row.Declared, 0, len(byID))
	var id int64
	var r livenessRow
	dest := append([]any{&id}, r.dest(x.Dialect)...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			done()
			return fmt.Errorf("read liveness states: %w", err)
		}
		ls = append(ls, r.declared(id))
	}
	done()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read liveness states: %w", err)
	}
	if err := x.loadDeclarations(ls); err != nil {
		return err
	}
	row.FillNudgeStates(byID, ls)
	return nil
}

// livenessBatch writes liveness rows (livenessRows), each replacing the
// agent's.
var livenessBatch = Batch{What: "save liveness states",
	Head: `INSERT INTO liveness (agent_id, created_at, last_activity_log_at, last_checkpoint_at, last_reflection_at,
		reflection_due, reflection_due_since, reflection_skipped_at, active_deep_work_id, expired_deep_work_id,
		deep_work_ended_at, health_state, health_kinds, next_eval_at) `,
	Tail: ` ON CONFLICT (agent_id) DO UPDATE SET created_at = excluded.created_at,
		last_activity_log_at = excluded.last_activity_log_at, last_checkpoint_at = excluded.last_checkpoint_at,
		last_reflection_at = excluded.last_reflection_at, reflection_due = excluded.reflection_due,
		reflection_due_since = excluded.reflection_due_since, reflection_skipped_at = excluded.reflection_skipped_at,
		active_deep_work_id = excluded.active_deep_work_id, expired_deep_work_id = excluded.expired_deep_work_id,
		deep_work_ended_at = excluded.deep_work_ended_at, health_state = excluded.health_state,
		health_kinds = excluded.health_kinds, next_eval_at = excluded.next_eval_at`,
	Types: []string{"bigint", "bigint", "bigint", "bigint", "bigint", "boolean", "bigint", "bigint", "bigint", "bigint",
		"bigint", "text", "text[]", "bigint"},
}

// SaveLivenessState implements hub.HealthTx.
func (x Statements) SaveLivenessState(st *hub.LivenessState, nextEvalAt time.Time) error {
	return x.SaveLivenessStates([]*hub.LivenessState{st}, []time.Time{nextEvalAt})
}

// SaveLivenessStates implements hub.HealthTx: one row per agent, the last
// given (PostgreSQL's upsert may not touch a row twice).
func (x Statements) SaveLivenessStates(sts []*hub.LivenessState, next []time.Time) error {
	last := make(map[int64]int, len(sts))
	for i, st := range sts {
		last[st.AgentID] = i
	}
	rows := make([]any, 0, len(livenessBatch.Types)*len(last))
	for i, st := range sts {
		if last[st.AgentID] != i {
			continue
		}
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
		rows = append(rows, st.AgentID, row.Nanos(st.CreatedAt), row.Nanos(st.LastActivityLogAt), row.Nanos(st.LastCheckpointAt), row.Nanos(st.LastReflectionAt),
			st.ReflectionDue, row.Nanos(st.ReflectionDueSince), row.Nanos(st.ReflectionSkippedAt), activeID, expiredID,
			row.Nanos(st.DeepWorkEndedAt), health, x.Dialect.Kinds(kinds), row.Nanos(next[i]))
	}
	return x.DB.ExecRows(livenessBatch, rows, nil)
}

// SetNextEvals implements hub.HealthTx.
func (x Statements) SetNextEvals(evals []hub.AgentTime) error {
	rows := make([]any, 0, 2*len(evals))
	for _, e := range evals {
		rows = append(rows, e.AgentID, row.Nanos(e.At))
	}
	return x.DB.ExecRows(Batch{What: "set next evaluations",
		Head:  `UPDATE liveness SET next_eval_at = v.column2 FROM (`,
		Tail:  `) AS v WHERE liveness.agent_id = v.column1`,
		Types: []string{"bigint", "bigint"}}, rows, nil)
}

// overviewLiveness is livenessColumns of a liveness row that may be missing
// (LEFT JOIN liveness l): then the state NewLivenessState gives, from the
// agent's registration; its last column takes the empty kinds as an
// argument.
const overviewLiveness = `COALESCE(l.created_at, a.created_at), COALESCE(l.last_activity_log_at, 0),
	COALESCE(l.last_checkpoint_at, 0), COALESCE(l.last_reflection_at, 0), COALESCE(l.reflection_due, %[1]s),
	COALESCE(l.reflection_due_since, 0), COALESCE(l.reflection_skipped_at, 0), COALESCE(l.active_deep_work_id, 0),
	COALESCE(l.expired_deep_work_id, 0), COALESCE(l.deep_work_ended_at, 0), COALESCE(l.health_state, 'healthy'),
	COALESCE(l.health_kinds, ?)`

// OverviewRows implements hub.HealthTx: one query of the agents, their
// inbox counters and their liveness rows, then one of the declarations
// those rows name.
func (x Statements) OverviewRows(all bool, ids []int64) ([]hub.OverviewRow, error) {
	d := x.Dialect
	q := `SELECT ` + row.AgentColumnsA + `, COALESCE(c.unread, 0), COALESCE(c.mentions, 0), ` + fmt.Sprintf(overviewLiveness, d.False) + `
		FROM agents a LEFT JOIN inbox_counts c ON c.agent_id = a.id LEFT JOIN liveness l ON l.agent_id = a.id`
	args := []any{d.Kinds(nil)}
	if all {
		q += ` ORDER BY a.name`
	} else if len(ids) == 0 {
		return nil, nil
	} else {
		q += ` WHERE ` + d.InIDs("a.id")
		args = append(args, d.IDs(ids))
	}
	rows, done, err := x.DB.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("read overview rows: %w", err)
	}
	n := len(ids)
	if all {
		n = 0
	}
	out, ls := make([]hub.OverviewRow, 0, n), make([]*row.Declared, 0, n)
	var unread, mentions int64
	var r livenessRow
	scan := row.NewAgentScan(append([]any{&unread, &mentions}, r.dest(d)...)...)
	for rows.Next() {
		a, err := scan.Scan(rows)
		if err != nil {
			done()
			return nil, fmt.Errorf("read overview rows: %w", err)
		}
		out, ls = append(out, hub.OverviewRow{Agent: a, Unread: unread, Mentions: mentions}), append(ls, r.declared(a.ID))
	}
	done()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read overview rows: %w", err)
	}
	if err := x.loadDeclarations(ls); err != nil {
		return nil, err
	}
	for i, l := range ls {
		out[i].State = l.State
	}
	return out, nil
}
