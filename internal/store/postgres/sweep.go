package postgres

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.SweepTx: the set-based reads and writes of the
// orchestrator's batched health sweep and nudge checks. Lists of IDs are
// bound as one array (= ANY($1)) and rows to write as one array per column
// expanded by unnest, so every statement has a constant text whatever the
// batch size.

// deepWorks returns the declarations with the given IDs by ID. ENOTFOUND
// when one does not exist.
func (t *Tx) deepWorks(ids []int64) (map[int64]*hub.DeepWork, error) {
	out := make(map[int64]*hub.DeepWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT `+deepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE d.id = ANY($1)`, ids)
	dws, err := scanRows(rows, err, func(r pgx.Rows) (*hub.DeepWork, error) { return scanDeepWork(r) })
	if err != nil {
		return nil, fmt.Errorf("read deep work: %w", err)
	}
	for _, d := range dws {
		out[d.ID] = d
	}
	for _, id := range ids {
		if out[id] == nil {
			return nil, hub.Errorf(hub.ENOTFOUND, "no deep work declaration %d", id)
		}
	}
	return out, nil
}

// livenessOf is one agent's liveness row being loaded.
type livenessOf struct {
	agentID int64
	row     livenessRow
	st      *hub.LivenessState
	stale   bool
}

// loadDeclarations sets the declarations of each state from its row, with
// one read for all of them. A declaration closed by hand is never loaded
// as active (and marks the row stale).
func (t *Tx) loadDeclarations(ls []*livenessOf) error {
	var ids []int64
	for _, l := range ls {
		for _, id := range []int64{l.row.activeID, l.row.expiredID} {
			if id != 0 {
				ids = append(ids, id)
			}
		}
	}
	dws, err := t.deepWorks(ids)
	if err != nil {
		return err
	}
	for _, l := range ls {
		if id := l.row.activeID; id != 0 {
			if d := dws[id]; d.IsActive() {
				l.st.ActiveDeepWork = d
			} else {
				l.stale = true
			}
		}
		if id := l.row.expiredID; id != 0 {
			l.st.ExpiredDeepWork = dws[id]
		}
	}
	return nil
}

// DueHealth implements hub.SweepTx.
func (t *Tx) DueHealth(now time.Time, limit int) ([]hub.AgentLiveness, error) {
	rows, err := t.query(`SELECT `+agentColumnsA+`, `+livenessColumns+` FROM liveness l JOIN agents a ON a.id = l.agent_id
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= $1 AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT $2`, toNanos(now), limit)
	var as []*hub.Agent
	ls, err := scanRows(rows, err, func(r pgx.Rows) (*livenessOf, error) {
		l := &livenessOf{}
		a, err := scanAgent(r, l.row.dest()...)
		if err != nil {
			return nil, err
		}
		l.agentID, l.st = a.ID, l.row.state(a.ID)
		as = append(as, a)
		return l, nil
	})
	if err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	if err := t.loadDeclarations(ls); err != nil {
		return nil, err
	}
	out := make([]hub.AgentLiveness, len(as))
	for i, a := range as {
		out[i] = hub.AgentLiveness{Agent: a, State: ls[i].st, Stale: ls[i].stale}
	}
	return out, nil
}

// agentTimes splits evals into agent IDs and instants (nanoseconds, at
// least floor).
func agentTimes(evals []hub.AgentTime, floor int64) (ids, at []int64) {
	ids, at = make([]int64, len(evals)), make([]int64, len(evals))
	for i, e := range evals {
		ids[i], at[i] = e.AgentID, max(toNanos(e.At), floor)
	}
	return ids, at
}

// SetNextEvals implements hub.SweepTx.
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

// DueNudges implements hub.SweepTx.
func (t *Tx) DueNudges(now time.Time, limit int) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT `+agentColumnsA+`, c.next_check_at, c.episode, c.nudge_count, c.last_nudge_at
		FROM agent_checks c JOIN agents a ON a.id = c.agent_id
		WHERE c.next_check_at > 0 AND c.next_check_at <= $1 ORDER BY c.next_check_at LIMIT $2`, toNanos(now), limit)
	out, err := scanRows(rows, err, func(r pgx.Rows) (hub.DueNudge, error) {
		var c hub.AgentCheck
		var next, last int64
		a, err := scanAgent(r, &next, &c.Episode, &c.NudgeCount, &last)
		if err != nil {
			return hub.DueNudge{}, err
		}
		c.AgentID, c.NextCheckAt, c.LastNudgeAt = a.ID, fromNanos(next), fromNanos(last)
		return hub.DueNudge{Agent: a, Check: c}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("due nudge checks: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(out))
	byID := make(map[int64]*hub.DueNudge, len(out))
	for i := range out {
		ids[i] = out[i].Agent.ID
		byID[ids[i]] = &out[i]
	}
	if err := t.nudgeLiveness(ids, byID); err != nil {
		return nil, err
	}
	if err := t.nudgeMentions(ids, byID); err != nil {
		return nil, err
	}
	return out, nil
}

// nudgeLiveness sets the liveness state of each agent of byID, as
// LivenessState would.
func (t *Tx) nudgeLiveness(ids []int64, byID map[int64]*hub.DueNudge) error {
	rows, err := t.query(`SELECT l.agent_id, `+livenessColumns+` FROM liveness l WHERE l.agent_id = ANY($1)`, ids)
	ls, err := scanRows(rows, err, func(r pgx.Rows) (*livenessOf, error) {
		l := &livenessOf{}
		if err := r.Scan(append([]any{&l.agentID}, l.row.dest()...)...); err != nil {
			return nil, err
		}
		l.st = l.row.state(l.agentID)
		return l, nil
	})
	if err != nil {
		return fmt.Errorf("read liveness states: %w", err)
	}
	if err := t.loadDeclarations(ls); err != nil {
		return err
	}
	for _, l := range ls {
		if n := byID[l.agentID]; n != nil {
			n.State = l.st
		}
	}
	for _, n := range byID {
		if n.State == nil { // no stored state: as LivenessState
			st := hub.NewLivenessState(n.Agent.ID, n.Agent.CreatedAt)
			n.State = &st
		}
	}
	return nil
}

// nudgeMentions sets the unread mentions of each agent of byID, as
// UnreadMentions would.
func (t *Tx) nudgeMentions(ids []int64, byID map[int64]*hub.DueNudge) error {
	rows, err := t.query(`SELECT a.id, COUNT(*), MIN(m.created_at) FROM agents a
		JOIN deliveries d ON d.agent_id = a.id AND d.message_id > a.read_up_to
		JOIN messages m ON m.id = d.message_id
		WHERE a.id = ANY($1) AND d.mention AND m.sender <> $2
		GROUP BY a.id`, ids, hub.SenderOrchestrator)
	if err != nil {
		return fmt.Errorf("unread mentions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, n, oldest int64
		if err := rows.Scan(&id, &n, &oldest); err != nil {
			return err
		}
		if d := byID[id]; d != nil {
			d.UnreadMentions, d.OldestMention = n, fromNanos(oldest)
		}
	}
	return rows.Err()
}

// PutAgentChecks implements hub.SweepTx.
func (t *Tx) PutAgentChecks(cs []hub.AgentCheck) error {
	if len(cs) == 0 {
		return nil
	}
	// One row per agent, the last given (an upsert may not touch a row twice).
	at := map[int64]int{}
	var ids, next, counts, last []int64
	var episodes []string
	for _, c := range cs {
		i, ok := at[c.AgentID]
		if !ok {
			i, at[c.AgentID] = len(ids), len(ids)
			ids, next, counts, last, episodes = append(ids, 0), append(next, 0), append(counts, 0), append(last, 0), append(episodes, "")
		}
		ids[i], next[i], episodes[i], counts[i], last[i] = c.AgentID, toNanos(c.NextCheckAt), c.Episode, int64(c.NudgeCount), toNanos(c.LastNudgeAt)
	}
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[])
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
			nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`, ids, next, episodes, counts, last)
	if err != nil {
		return fmt.Errorf("put agent checks: %w", err)
	}
	return nil
}

// ScheduleAgentChecks implements hub.SweepTx. An agent named twice keeps
// the earliest time.
func (t *Tx) ScheduleAgentChecks(cs []hub.AgentTime) error {
	if len(cs) == 0 {
		return nil
	}
	ids, at := agentTimes(cs, 1)
	_, err := t.exec(`INSERT INTO agent_checks (agent_id, next_check_at)
		SELECT id, MIN(at) FROM unnest($1::bigint[], $2::bigint[]) AS v(id, at) GROUP BY id
		ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`, ids, at)
	if err != nil {
		return fmt.Errorf("schedule agent checks: %w", err)
	}
	return nil
}
