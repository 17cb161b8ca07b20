package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.HealthTx's reads: the per-agent liveness state
// the health rules read, and the orchestrator's due sweep. Its writes of
// many rows (SaveLivenessStates, SetNextEvals) are each store's.

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
