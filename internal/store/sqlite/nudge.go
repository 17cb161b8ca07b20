package sqlite

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// This file implements hub.SweepTx: the set-based reads and writes of the
// orchestrator's batched health sweep and nudge checks. A list of IDs to
// read is bound as one JSON array and expanded by json_each, so the query
// has a constant text and stays in the statement cache whatever the batch
// size. Rows to write go in multi-row VALUES statements (execRows): binding
// each value costs far less than extracting it from JSON (about 1 µs per
// ->> field, measured), and one statement per 64 rows far less than one
// per row.

// agentColumnsA is agentColumns qualified with the table alias a.
var agentColumnsA = func() string {
	cols := strings.Split(agentColumns, ",")
	for i, c := range cols {
		cols[i] = "a." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// scanPlus scans a row into the destinations its caller gives, then into
// extra: scanAgent's columns followed by others.
type scanPlus struct {
	s     scanner
	extra []any
}

func (p scanPlus) Scan(dest ...any) error { return p.s.Scan(append(dest, p.extra...)...) }

// idList returns ids as a JSON array.
func idList(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// deepWorks returns the declarations with the given IDs by ID. ENOTFOUND
// when one does not exist (as deepWorkByID).
func (t *Tx) deepWorks(ids []int64) (map[int64]*hub.DeepWork, error) {
	out := make(map[int64]*hub.DeepWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT `+deepWorkColumns+` FROM deep_work d JOIN agents a ON a.id = d.agent_id
		WHERE d.id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("read deep work: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDeepWork(rows)
		if err != nil {
			return nil, err
		}
		out[d.ID] = d
	}
	if err := rows.Err(); err != nil {
		return nil, err
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

// loadDeclarations sets the declarations of each state from its row, as
// LivenessState does, with one read for all of them.
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
			} else { // closed by hand: never considered again
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
		WHERE l.next_eval_at > 0 AND l.next_eval_at <= ? AND a.disabled_at = 0
		ORDER BY l.next_eval_at LIMIT ?`, toNanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due health: %w", err)
	}
	var as []*hub.Agent
	var ls []*livenessOf
	for rows.Next() {
		l := &livenessOf{}
		a, err := scanAgent(scanPlus{rows, l.row.dest()})
		if err != nil {
			rows.Close()
			return nil, err
		}
		l.agentID, l.st = a.ID, l.row.state(a.ID)
		as, ls = append(as, a), append(ls, l)
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
		out[i] = hub.AgentLiveness{Agent: a, State: ls[i].st, Stale: ls[i].stale}
	}
	return out, nil
}

// SetNextEvals implements hub.SweepTx.
func (t *Tx) SetNextEvals(evals []hub.AgentTime) error {
	args := make([]any, 0, 2*len(evals))
	for _, e := range evals {
		args = append(args, e.AgentID, toNanos(e.At))
	}
	return t.execRows("set next evaluations", `UPDATE liveness SET next_eval_at = v.column2 FROM (VALUES `,
		`) AS v WHERE liveness.agent_id = v.column1`, 2, args, nil)
}

// DueNudges implements hub.SweepTx.
func (t *Tx) DueNudges(now time.Time, limit int) ([]hub.DueNudge, error) {
	rows, err := t.query(`SELECT `+agentColumnsA+`, c.next_check_at, c.episode, c.nudge_count, c.last_nudge_at
		FROM agent_checks c JOIN agents a ON a.id = c.agent_id
		WHERE c.next_check_at > 0 AND c.next_check_at <= ? ORDER BY c.next_check_at LIMIT ?`, toNanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due nudge checks: %w", err)
	}
	var out []hub.DueNudge
	byID := map[int64]*hub.DueNudge{}
	for rows.Next() {
		var c hub.AgentCheck
		var next, last int64
		a, err := scanAgent(scanPlus{rows, []any{&next, &c.Episode, &c.NudgeCount, &last}})
		if err != nil {
			rows.Close()
			return nil, err
		}
		c.AgentID, c.NextCheckAt, c.LastNudgeAt = a.ID, fromNanos(next), fromNanos(last)
		out = append(out, hub.DueNudge{Agent: a, Check: c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(out))
	for i := range out {
		ids[i] = out[i].Agent.ID
		byID[ids[i]] = &out[i]
	}
	list := idList(ids)
	if err := t.nudgeLiveness(list, byID); err != nil {
		return nil, err
	}
	if err := t.nudgeMentions(list, byID); err != nil {
		return nil, err
	}
	return out, nil
}

// nudgeLiveness sets the liveness state of each agent of byID (list: their
// IDs as JSON), as LivenessState would.
func (t *Tx) nudgeLiveness(list string, byID map[int64]*hub.DueNudge) error {
	rows, err := t.query(`SELECT l.agent_id, `+livenessColumns+` FROM liveness l
		WHERE l.agent_id IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return fmt.Errorf("read liveness states: %w", err)
	}
	var ls []*livenessOf
	for rows.Next() {
		l := &livenessOf{}
		if err := rows.Scan(append([]any{&l.agentID}, l.row.dest()...)...); err != nil {
			rows.Close()
			return err
		}
		l.st = l.row.state(l.agentID)
		ls = append(ls, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
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
func (t *Tx) nudgeMentions(list string, byID map[int64]*hub.DueNudge) error {
	rows, err := t.query(`SELECT a.id, COUNT(*), MIN(m.created_at) FROM agents a
		JOIN deliveries d ON d.agent_id = a.id AND d.message_id > a.read_up_to
		JOIN messages m ON m.id = d.message_id
		WHERE a.id IN (SELECT value FROM json_each(?)) AND d.mention = 1 AND m.sender <> ?
		GROUP BY a.id`, list, hub.SenderOrchestrator)
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

// valuesChunk is how many rows one statement of execRows writes at most.
const valuesChunk = 64

// execRows writes rows of cols values each (args, row after row) with
// statements head + "(?, …), (?, …) …" + tail of up to valuesChunk rows:
// the full ones through the statement cache (one text per kind), the last
// partial one prepared for this call only, so that the cache does not fill
// with one text per row count. done, if not nil, is called after each
// statement with the index of its first row and its row count.
func (t *Tx) execRows(what, head, tail string, cols int, args []any, done func(first, n int, res sql.Result) error) error {
	rows := len(args) / cols
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	text := func(n int) string { return head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + tail }
	for first := 0; first < rows; first += valuesChunk {
		n := min(valuesChunk, rows-first)
		chunk := args[first*cols : (first+n)*cols]
		var res sql.Result
		var err error
		if n == valuesChunk {
			res, err = t.exec(text(n), chunk...)
		} else {
			res, err = t.execOnce(text(n), chunk...)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done != nil {
			if err := done(first, n, res); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	return nil
}

// execOnce runs q as a statement prepared for this call only (outside the
// connection's statement cache).
func (t *Tx) execOnce(q string, args ...any) (sql.Result, error) {
	st, err := t.tx.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	res, err := st.ExecContext(t.ctx, args...)
	return res, mapErr(err)
}

// PutAgentChecks implements hub.SweepTx.
func (t *Tx) PutAgentChecks(cs []hub.AgentCheck) error {
	args := make([]any, 0, 5*len(cs))
	for _, c := range cs {
		args = append(args, c.AgentID, toNanos(c.NextCheckAt), c.Episode, c.NudgeCount, toNanos(c.LastNudgeAt))
	}
	return t.execRows("put agent checks", `INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at) VALUES `,
		` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at, episode = excluded.episode,
			nudge_count = excluded.nudge_count, last_nudge_at = excluded.last_nudge_at`, 5, args, nil)
}

// InsertEvents implements hub.SweepTx.
func (t *Tx) InsertEvents(es []hub.Event) error {
	args := make([]any, 0, 4*len(es))
	for _, e := range es {
		var agent any
		if e.AgentID != 0 {
			agent = e.AgentID
		}
		args = append(args, agent, string(e.Kind), e.Detail, toNanos(e.CreatedAt))
	}
	return t.execRows("insert events", `INSERT INTO events (agent_id, kind, detail, created_at) VALUES `, ``, 4, args, nil)
}

// SaveLivenessStates implements hub.SweepTx.
func (t *Tx) SaveLivenessStates(sts []*hub.LivenessState, next []time.Time) error {
	args := make([]any, 0, 14*len(sts))
	for i, st := range sts {
		args = append(args, livenessArgs(st, next[i])...)
	}
	return t.execRows("save liveness states", livenessInsert+` VALUES `, livenessUpsert, 14, args, nil)
}

// ScheduleAgentChecks implements hub.SweepTx.
func (t *Tx) ScheduleAgentChecks(cs []hub.AgentTime) error {
	args := make([]any, 0, 2*len(cs))
	for _, c := range cs {
		args = append(args, c.AgentID, max(toNanos(c.At), 1))
	}
	return t.execRows("schedule agent checks", `INSERT INTO agent_checks (agent_id, next_check_at) VALUES `,
		` ON CONFLICT (agent_id) DO UPDATE SET next_check_at = excluded.next_check_at
		WHERE agent_checks.next_check_at = 0 OR agent_checks.next_check_at > excluded.next_check_at`, 2, args, nil)
}

// InsertMessages implements hub.SweepTx: a statement inserts up to
// valuesChunk messages, which get consecutive IDs in order (AUTOINCREMENT
// gives each new row one more than the largest ID ever used, and the rows
// of one statement are inserted one after the other); then their
// deliveries.
func (t *Tx) InsertMessages(ms []*hub.Message, ds [][]hub.Delivery) error {
	args := make([]any, 0, 8*len(ms))
	for _, m := range ms {
		args = append(args, m.From, joinNames(m.To), m.Channel, m.Body, joinNames(m.Mentions), m.ReplyTo, m.Kind, toNanos(m.CreatedAt))
	}
	err := t.execRows("insert messages", `INSERT INTO messages (sender, recipients, channel, body, mentions, reply_to, kind, created_at) VALUES `,
		``, 8, args, func(first, n int, res sql.Result) error {
			last, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if got, err := res.RowsAffected(); err != nil || got != int64(n) {
				return fmt.Errorf("%d of %d rows inserted (%v)", got, n, err)
			}
			for i := range n {
				ms[first+i].ID = last - int64(n-1-i)
			}
			return nil
		})
	if err != nil {
		return err
	}
	var dargs []any
	for i, m := range ms {
		for _, d := range ds[i] {
			dargs = append(dargs, d.AgentID, m.ID, d.Mention)
		}
	}
	return t.execRows("insert deliveries", `INSERT INTO deliveries (agent_id, message_id, mention) VALUES `, ``, 3, dargs, nil)
}
