// Package usagesql implements hub.UsageTx once for both stores: the usage
// tables (migration 0021_usage in internal/store/migration) have
// the same columns, and the statements are plain SQL that SQLite and
// PostgreSQL read alike, with "?" placeholders that a store rewrites as
// it needs (its tasksql.DB).
package usagesql

import (
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/tasksql"
)

// Usage implements hub.UsageTx over a store's transaction.
type Usage struct {
	DB tasksql.DB
}

// heldTask is HeldTask's query, the state written out: bound, it would
// not let the planner use the index of claimed tasks by assignee
// (tasks_assignee, partial), and every report would scan every task. The
// latest is chosen here rather than sorted by the statement: an agent
// holds a task or two at most.
const heldTask = `SELECT id, claimed_at FROM tasks WHERE assignee_id = ? AND state = '` + string(hub.TaskClaimed) + `'`

// HeldTask implements hub.UsageTx.
func (x Usage) HeldTask(agentID int64) (int64, error) {
	rows, closeRows, err := x.DB.Query(heldTask, agentID)
	if err != nil {
		return 0, fmt.Errorf("held task: %w", err)
	}
	defer closeRows()
	var held, latest int64
	for rows.Next() {
		var id, claimed int64
		if err := rows.Scan(&id, &claimed); err != nil {
			return 0, fmt.Errorf("held task: %w", err)
		}
		if claimed > latest || (claimed == latest && id > held) {
			held, latest = id, claimed
		}
	}
	return held, rows.Err()
}

// add is the upsert of one rollup row into table.
func add(table string) string {
	return `INSERT INTO ` + table + ` (agent_id, at, task_id, model, project,
		input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, requests, cost_usd)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (agent_id, at, task_id, model) DO UPDATE SET
		project = excluded.project,
		input_tokens = ` + table + `.input_tokens + excluded.input_tokens,
		output_tokens = ` + table + `.output_tokens + excluded.output_tokens,
		cache_read_tokens = ` + table + `.cache_read_tokens + excluded.cache_read_tokens,
		cache_creation_tokens = ` + table + `.cache_creation_tokens + excluded.cache_creation_tokens,
		requests = ` + table + `.requests + excluded.requests,
		cost_usd = ` + table + `.cost_usd + excluded.cost_usd`
}

var addMinute, addDay = add("usage_minutes"), add("usage_days")

// AddUsage implements hub.UsageTx.
func (x Usage) AddUsage(minutes, days []hub.UsageRollup) error {
	for _, set := range []struct {
		q    string
		rows []hub.UsageRollup
	}{{addMinute, minutes}, {addDay, days}} {
		for _, r := range set.rows {
			c := r.Counts
			if _, err := x.DB.Exec(set.q, r.AgentID, r.At.UnixNano(), r.TaskID, r.Model, r.Project,
				c.Input, c.Output, c.CacheRead, c.CacheCreation, c.Requests, c.CostUSD); err != nil {
				return fmt.Errorf("add usage: %w", err)
			}
		}
	}
	return nil
}

// TakeBackUsage implements hub.UsageTx.
func (x Usage) TakeBackUsage(minutes, days []hub.UsageRollup) error {
	for _, set := range []struct {
		table string
		rows  []hub.UsageRollup
	}{{"usage_minutes", minutes}, {"usage_days", days}} {
		for _, r := range set.rows {
			if err := x.takeBack(set.table, r); err != nil {
				return fmt.Errorf("take back usage: %w", err)
			}
		}
	}
	return nil
}

// takeBack subtracts r's counts (each 0 or below) from the rows of table
// of r's agent, time and model, task by task, none below zero; a row
// left with nothing goes.
func (x Usage) takeBack(table string, r hub.UsageRollup) error {
	rows, closeRows, err := x.DB.Query(`SELECT task_id, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, requests, cost_usd
	FROM `+table+` WHERE agent_id = ? AND at = ? AND model = ? ORDER BY task_id`, r.AgentID, r.At.UnixNano(), r.Model)
	if err != nil {
		return err
	}
	type held struct {
		task int64
		c    hub.UsageCounts
	}
	var hs []held
	for rows.Next() {
		var h held
		if err := rows.Scan(&h.task, &h.c.Input, &h.c.Output, &h.c.CacheRead, &h.c.CacheCreation, &h.c.Requests, &h.c.CostUSD); err != nil {
			closeRows()
			return err
		}
		hs = append(hs, h)
	}
	err = rows.Err()
	closeRows()
	if err != nil {
		return err
	}
	owed := r.Counts
	for _, h := range hs {
		c := h.c
		take := func(have, owe *int64) {
			n := min(*have, -*owe)
			*have, *owe = *have-n, *owe+n
		}
		take(&c.Input, &owed.Input)
		take(&c.Output, &owed.Output)
		take(&c.CacheRead, &owed.CacheRead)
		take(&c.CacheCreation, &owed.CacheCreation)
		take(&c.Requests, &owed.Requests)
		n := min(c.CostUSD, -owed.CostUSD)
		c.CostUSD, owed.CostUSD = c.CostUSD-n, owed.CostUSD+n
		if c == h.c {
			continue
		}
		if c.IsZero() || c.CostUSD < 1e-12 && c.Tokens() == 0 && c.Requests == 0 {
			_, err = x.DB.Exec(`DELETE FROM `+table+` WHERE agent_id = ? AND at = ? AND task_id = ? AND model = ?`, r.AgentID, r.At.UnixNano(), h.task, r.Model)
		} else {
			_, err = x.DB.Exec(`UPDATE `+table+` SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?, requests = ?, cost_usd = ?
			WHERE agent_id = ? AND at = ? AND task_id = ? AND model = ?`,
				c.Input, c.Output, c.CacheRead, c.CacheCreation, c.Requests, c.CostUSD, r.AgentID, r.At.UnixNano(), h.task, r.Model)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dayNanos and hourNanos are a day and an hour in the at column's unit.
const (
	dayNanos  = int64(24 * time.Hour)
	hourNanos = int64(time.Hour)
)

// groupExprs are the expressions of each field a report groups by, in
// the order of UsageRow's fields: agent, project, task ID, task title,
// model, day, hour; and what a field not grouped by reads.
var groupExprs = map[hub.UsageGroup][]string{
	hub.UsageByAgent:   {"a.name"},
	hub.UsageByProject: {"u.project"},
	hub.UsageByTask:    {"u.task_id", "COALESCE(t.title, '')"},
	hub.UsageByModel:   {"u.model"},
	hub.UsageByDay:     {fmt.Sprintf("(u.at / %d) * %d", dayNanos, dayNanos)},
	hub.UsageByHour:    {fmt.Sprintf("(u.at / %d) * %d", hourNanos, hourNanos)},
}

var fieldOrder = []struct {
	g       hub.UsageGroup
	absent  []string
	columns int
}{
	{hub.UsageByAgent, []string{"''"}, 1},
	{hub.UsageByProject, []string{"''"}, 1},
	{hub.UsageByTask, []string{"0", "''"}, 2},
	{hub.UsageByModel, []string{"''"}, 1},
	{hub.UsageByDay, []string{"0"}, 1},
	{hub.UsageByHour, []string{"0"}, 1},
}

// UsageReport implements hub.UsageTx.
func (x Usage) UsageReport(q hub.UsageQuery) ([]hub.UsageRow, error) {
	grouped := map[hub.UsageGroup]bool{}
	for _, g := range q.GroupBy {
		grouped[g] = true
	}
	var sel, group []string
	for _, f := range fieldOrder {
		if grouped[f.g] {
			sel = append(sel, groupExprs[f.g]...)
			group = append(group, groupExprs[f.g]...)
		} else {
			sel = append(sel, f.absent...)
		}
	}
	table := "usage_minutes"
	if q.Days {
		table = "usage_days"
	}
	stmt := `SELECT ` + strings.Join(sel, ", ") + `,
		CAST(SUM(u.input_tokens) AS BIGINT), CAST(SUM(u.output_tokens) AS BIGINT),
		CAST(SUM(u.cache_read_tokens) AS BIGINT), CAST(SUM(u.cache_creation_tokens) AS BIGINT),
		CAST(SUM(u.requests) AS BIGINT), SUM(u.cost_usd)
	FROM ` + table + ` u JOIN agents a ON a.id = u.agent_id LEFT JOIN tasks t ON t.id = u.task_id
	WHERE u.at >= ? AND u.at < ?`
	args := []any{q.Since.UnixNano(), q.Until.UnixNano()}
	if q.AgentID != 0 {
		stmt += ` AND u.agent_id = ?`
		args = append(args, q.AgentID)
	}
	if len(q.Projects) > 0 {
		stmt += ` AND u.project IN (?` + strings.Repeat(`, ?`, len(q.Projects)-1) + `)`
		for _, p := range q.Projects {
			args = append(args, p)
		}
	}
	stmt += ` GROUP BY ` + strings.Join(group, ", ") + ` ORDER BY ` + strings.Join(group, ", ")
	if q.Max > 0 {
		stmt += ` LIMIT ?`
		args = append(args, q.Max)
	}
	rows, closeRows, err := x.DB.Query(stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("usage report: %w", err)
	}
	defer closeRows()
	var out []hub.UsageRow
	for rows.Next() {
		var r hub.UsageRow
		var day, hour int64
		c := &r.Counts
		if err := rows.Scan(&r.Agent, &r.Project, &r.TaskID, &r.TaskTitle, &r.Model, &day, &hour,
			&c.Input, &c.Output, &c.CacheRead, &c.CacheCreation, &c.Requests, &c.CostUSD); err != nil {
			return nil, fmt.Errorf("usage report: %w", err)
		}
		if grouped[hub.UsageByDay] {
			r.Day = row.Time(day).UTC()
		}
		if grouped[hub.UsageByHour] {
			r.Hour = row.Time(hour).UTC()
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// deleteBefore deletes the oldest rows of table before before, about
// limit of them (every row of the last minute or day reached goes).
func (x Usage) deleteBefore(table string, before time.Time, limit int) (int64, error) {
	return x.DB.Exec(`DELETE FROM `+table+` WHERE at <= (
		SELECT MAX(at) FROM (SELECT at FROM `+table+` WHERE at < ? ORDER BY at LIMIT ?) s)`, before.UnixNano(), limit)
}

// DeleteUsageBefore implements hub.UsageTx.
func (x Usage) DeleteUsageBefore(minutesBefore, daysBefore time.Time, limit int) (int64, error) {
	var n int64
	if !minutesBefore.IsZero() {
		d, err := x.deleteBefore("usage_minutes", minutesBefore, limit)
		if n += d; err != nil || n >= int64(limit) {
			return n, err
		}
	}
	if !daysBefore.IsZero() {
		d, err := x.deleteBefore("usage_days", daysBefore, limit-int(n))
		n += d
		return n, err
	}
	return n, nil
}

// UsageBefore implements hub.UsageTx.
func (x Usage) UsageBefore(minutesBefore, daysBefore time.Time) (bool, error) {
	for _, t := range []struct {
		table  string
		before time.Time
	}{{"usage_minutes", minutesBefore}, {"usage_days", daysBefore}} {
		if t.before.IsZero() {
			continue
		}
		var one int
		err := x.DB.QueryRow(`SELECT 1 FROM `+t.table+` WHERE at < ? LIMIT 1`, t.before.UnixNano()).Scan(&one)
		if err == nil {
			return true, nil
		}
		if !x.DB.IsNoRows(err) {
			return false, fmt.Errorf("usage before: %w", err)
		}
	}
	return false, nil
}
