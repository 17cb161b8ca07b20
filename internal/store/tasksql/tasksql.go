// Package tasksql implements hub.TaskTx once for both stores: the task
// board's tables (migration 0016_tasks.sql)
// have the same columns, and its statements are plain SQL that SQLite and
// PostgreSQL read alike. A store hands its transaction in as a DB, with
// "?" placeholders rewritten as it needs.
package tasksql

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/storesql"
)

// Rows is the result of a query, as storesql reads it.
type Rows = storesql.Rows

// DB is a store's write or read transaction, as storesql takes it.
type DB = storesql.DB

// Tx implements hub.TaskTx over a DB.
type Tx struct {
	DB DB
	// Recorder is the write transaction's record (hub.ChangesTx): each
	// task the transaction leaves ready (inserted or updated so, or
	// released by a completed dependency) is recorded there, so that the
	// parked next_task calls it fits wake at the commit.
	Recorder hub.ChangesTx
	// Ready, if set, is told the project of each task the transaction
	// leaves ready: a store with several processes tells them there.
	Ready func(project string) error
}

func (x Tx) ready(ts ...*hub.Task) error {
	for _, t := range ts {
		if !t.Ready() {
			continue
		}
		if x.Recorder != nil {
			x.Recorder.Recording().Ready(t)
		}
		if x.Ready != nil {
			if err := x.Ready(t.Project); err != nil {
				return err
			}
		}
	}
	return nil
}

// columns are the columns scan reads, in order.
const columns = `t.id, t.project, t.title, t.description, t.state, t.priority, t.labels, t.role, t.paths, t.creator,
	COALESCE(t.creator_id, 0), COALESCE(t.assignee_id, 0), COALESCE(a.name, ''), t.waiting, t.thread_id, t.result,
	t.created_at, t.claimed_at, t.done_at, t.updated_at, t.lease_due`

// from is the FROM clause with the holder's name.
const from = ` FROM tasks t LEFT JOIN agents a ON a.id = t.assignee_id `

func scan(s row.Scanner) (*hub.Task, error) {
	var t hub.Task
	var state, labels, paths string
	var prio int
	var created, claimed, done, updated, due int64
	err := s.Scan(&t.ID, &t.Project, &t.Title, &t.Description, &state, &prio, &labels, &t.Role, &paths, &t.Creator,
		&t.CreatorID, &t.AssigneeID, &t.Assignee, &t.Waiting, &t.ThreadID, &t.Result, &created, &claimed, &done, &updated, &due)
	if err != nil {
		return nil, err
	}
	t.State, t.Priority, t.Labels = hub.TaskState(state), hub.Priority(prio), strings.Fields(labels)
	if err := json.Unmarshal([]byte(paths), &t.Paths); err != nil {
		return nil, fmt.Errorf("task %d paths: %w", t.ID, err)
	}
	t.CreatedAt, t.ClaimedAt, t.DoneAt, t.UpdatedAt, t.LeaseDue = row.Time(created), row.Time(claimed), row.Time(done), row.Time(updated), row.Time(due)
	return &t, nil
}

// labelText stores labels as " a b ", so that "% a %" finds a label.
func labelText(labels []string) string { return " " + strings.Join(labels, " ") + " " }

func pathsText(paths []string) (string, error) {
	if len(paths) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(paths)
	return string(b), err
}

// nullID is an agent reference: NULL for none.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// list runs a query of tasks and fills their dependencies.
func (x Tx) list(q string, args ...any) ([]*hub.Task, error) {
	out, err := x.listOnly(q, args...)
	if err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]int64, len(out))
	for i, t := range out {
		ids[i] = t.ID
	}
	deps, err := x.TaskDependencies(ids)
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		t.DependsOn = deps[t.ID]
	}
	return out, nil
}

// listOnly runs a query of tasks, leaving their dependencies out.
func (x Tx) listOnly(q string, args ...any) ([]*hub.Task, error) {
	rows, done, err := x.DB.Query(`SELECT `+columns+from+q, args...)
	if err != nil {
		return nil, err
	}
	var out []*hub.Task
	for rows.Next() {
		t, err := scan(rows)
		if err != nil {
			done()
			return nil, err
		}
		out = append(out, t)
	}
	err = rows.Err()
	done()
	return out, err
}

// InsertTask implements hub.TaskTx.
func (x Tx) InsertTask(t *hub.Task) error {
	paths, err := pathsText(t.Paths)
	if err != nil {
		return err
	}
	err = x.DB.QueryRow(`INSERT INTO tasks (project, title, description, state, priority, labels, role, paths, creator, creator_id,
		assignee_id, waiting, thread_id, result, created_at, claimed_at, done_at, updated_at, lease_due)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		t.Project, t.Title, t.Description, string(t.State), int(t.Priority), labelText(t.Labels), t.Role, paths, t.Creator, nullID(t.CreatorID),
		nullID(t.AssigneeID), t.Waiting, t.ThreadID, t.Result, row.Nanos(t.CreatedAt), row.Nanos(t.ClaimedAt), row.Nanos(t.DoneAt),
		row.Nanos(t.UpdatedAt), row.Nanos(t.LeaseDue)).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	if err := x.ready(t); err != nil {
		return err
	}
	return x.setDeps(t.ID, t.DependsOn)
}

// setDeps replaces task id's dependencies.
func (x Tx) setDeps(id int64, deps []int64) error {
	if _, err := x.DB.Exec(`DELETE FROM task_deps WHERE task_id = ?`, id); err != nil {
		return fmt.Errorf("task %d dependencies: %w", id, err)
	}
	for _, d := range deps {
		if _, err := x.DB.Exec(`INSERT INTO task_deps (task_id, depends_on) VALUES (?, ?)`, id, d); err != nil {
			return fmt.Errorf("task %d dependencies: %w", id, err)
		}
	}
	return nil
}

// TaskByID implements hub.TaskTx.
func (x Tx) TaskByID(id int64) (*hub.Task, error) {
	ts, err := x.list(`WHERE t.id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", id, err)
	}
	if len(ts) == 0 {
		return nil, hub.Errorf(hub.ENOTFOUND, "no task %d", id)
	}
	return ts[0], nil
}

// ListTasks implements hub.TaskTx.
func (x Tx) ListTasks(q hub.TaskQuery) ([]*hub.Task, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if q.Project != "" {
		add(`t.project = ?`, q.Project)
	}
	if q.Ready {
		where = append(where, `t.state = 'open' AND t.waiting = 0`)
	} else if q.State != "" {
		add(`t.state = ?`, string(q.State))
	}
	if q.Label != "" {
		add(`t.labels LIKE ?`, "% "+q.Label+" %")
	}
	if q.AfterID > 0 {
		add(`t.id > ?`, q.AfterID)
	}
	if !q.UpdatedSince.IsZero() {
		add(`t.updated_at >= ?`, q.UpdatedSince.UnixNano())
	}
	s := ""
	if len(where) > 0 {
		s = "WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, q.Limit)
	out, err := x.list(s+` ORDER BY t.id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// UpdateTask implements hub.TaskTx.
func (x Tx) UpdateTask(t *hub.Task) error {
	paths, err := pathsText(t.Paths)
	if err != nil {
		return err
	}
	n, err := x.DB.Exec(`UPDATE tasks SET title = ?, description = ?, state = ?, priority = ?, labels = ?, role = ?, paths = ?,
		assignee_id = ?, waiting = ?, result = ?, claimed_at = ?, done_at = ?, updated_at = ?, lease_due = ? WHERE id = ?`,
		t.Title, t.Description, string(t.State), int(t.Priority), labelText(t.Labels), t.Role, paths,
		nullID(t.AssigneeID), t.Waiting, t.Result, row.Nanos(t.ClaimedAt), row.Nanos(t.DoneAt), row.Nanos(t.UpdatedAt), row.Nanos(t.LeaseDue), t.ID)
	if err != nil {
		return fmt.Errorf("update task %d: %w", t.ID, err)
	}
	if n == 0 {
		return hub.Errorf(hub.ENOTFOUND, "no task %d", t.ID)
	}
	if err := x.ready(t); err != nil {
		return err
	}
	return x.setDeps(t.ID, t.DependsOn)
}

// ClaimTask implements hub.TaskTx: the conditional write.
func (x Tx) ClaimTask(id, agentID int64, now, leaseDue time.Time) (bool, error) {
	n, err := x.DB.Exec(`UPDATE tasks SET state = 'claimed', assignee_id = ?, claimed_at = ?, updated_at = ?, lease_due = ?
		WHERE id = ? AND state = 'open' AND waiting = 0`, agentID, now.UnixNano(), now.UnixNano(), leaseDue.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("claim task %d: %w", id, err)
	}
	return n == 1, nil
}

// ReadyTasks implements hub.TaskTx.
func (x Tx) ReadyTasks(project string, labels []string, role string, limit int) ([]*hub.Task, error) {
	q := `WHERE t.project = ? AND t.state = 'open' AND t.waiting = 0 AND (t.role = '' OR t.role = ?)`
	args := []any{project, role}
	for _, l := range labels {
		q += ` AND t.labels LIKE ?`
		args = append(args, "% "+l+" %")
	}
	out, err := x.listOnly(q+` ORDER BY t.priority DESC, t.created_at, t.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("ready tasks: %w", err)
	}
	return out, nil
}

// TaskDependencies implements hub.TaskTx.
func (x Tx) TaskDependencies(ids []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, done, err := x.DB.Query(`SELECT task_id, depends_on FROM task_deps WHERE task_id IN (?`+strings.Repeat(", ?", n-1)+`) ORDER BY task_id, depends_on`, args...)
		if err != nil {
			return nil, fmt.Errorf("task dependencies: %w", err)
		}
		for rows.Next() {
			var t, d int64
			if err := rows.Scan(&t, &d); err != nil {
				done()
				return nil, err
			}
			out[t] = append(out[t], d)
		}
		err = rows.Err()
		done()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ids runs a query of one ID column.
func (x Tx) ids(q string, args ...any) ([]int64, error) {
	rows, done, err := x.DB.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// TaskDependents implements hub.TaskTx.
func (x Tx) TaskDependents(id int64) ([]int64, error) {
	return x.ids(`SELECT task_id FROM task_deps WHERE depends_on = ? ORDER BY task_id`, id)
}

// ReleaseDependents implements hub.TaskTx.
func (x Tx) ReleaseDependents(id int64, now time.Time) ([]*hub.Task, error) {
	if _, err := x.DB.Exec(`UPDATE tasks SET waiting = waiting - 1, updated_at = ?
		WHERE id IN (SELECT task_id FROM task_deps WHERE depends_on = ?) AND waiting > 0`, now.UnixNano(), id); err != nil {
		return nil, fmt.Errorf("release the dependents of task %d: %w", id, err)
	}
	out, err := x.list(`WHERE t.id IN (SELECT task_id FROM task_deps WHERE depends_on = ?) AND t.state = 'open' AND t.waiting = 0 ORDER BY t.id`, id)
	if err != nil {
		return nil, err
	}
	return out, x.ready(out...)
}

// DueTaskLeases implements hub.TaskTx.
func (x Tx) DueTaskLeases(now time.Time, limit int) ([]*hub.Task, error) {
	out, err := x.list(`WHERE t.state = 'claimed' AND t.lease_due <= ? ORDER BY t.lease_due LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("due task leases: %w", err)
	}
	return out, nil
}

// SetTaskLeaseDue implements hub.TaskTx.
func (x Tx) SetTaskLeaseDue(id int64, at time.Time) error {
	if _, err := x.DB.Exec(`UPDATE tasks SET lease_due = ? WHERE id = ? AND state = 'claimed'`, at.UnixNano(), id); err != nil {
		return fmt.Errorf("task %d lease: %w", id, err)
	}
	return nil
}

// AddTaskWatcher implements hub.TaskTx.
func (x Tx) AddTaskWatcher(taskID, agentID int64) error {
	if _, err := x.DB.Exec(`INSERT INTO task_watchers (task_id, agent_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, taskID, agentID); err != nil {
		return fmt.Errorf("watch task %d: %w", taskID, err)
	}
	return nil
}

// TaskWatchers implements hub.TaskTx.
func (x Tx) TaskWatchers(taskID int64) ([]int64, error) {
	return x.ids(`SELECT agent_id FROM task_watchers WHERE task_id = ? ORDER BY agent_id`, taskID)
}

// TaskCheckpoints implements hub.TaskTx.
func (x Tx) TaskCheckpoints(id int64, limit int) ([]*hub.Checkpoint, error) {
	rows, done, err := x.DB.Query(`SELECT id, agent_id, task_id, current_activity, heartbeat_id, created_at
		FROM checkpoints WHERE task_id = ? ORDER BY id DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("task %d checkpoints: %w", id, err)
	}
	defer done()
	var out []*hub.Checkpoint
	for rows.Next() {
		var c hub.Checkpoint
		var created int64
		if err := rows.Scan(&c.ID, &c.AgentID, &c.TaskID, &c.CurrentActivity, &c.HeartbeatID, &created); err != nil {
			return nil, err
		}
		c.CreatedAt = row.Time(created)
		out = append(out, &c)
	}
	return out, rows.Err()
}

// TasksClaimedBy implements hub.TaskTx: up to 500 agents per query.
func (x Tx) TasksClaimedBy(agentIDs []int64) (map[int64][]*hub.Task, error) {
	out := map[int64][]*hub.Task{}
	for len(agentIDs) > 0 {
		n := min(len(agentIDs), 500)
		args := make([]any, n)
		for i, id := range agentIDs[:n] {
			args[i] = id
		}
		agentIDs = agentIDs[n:]
		ts, err := x.list(`WHERE t.assignee_id IN (?`+strings.Repeat(", ?", n-1)+`) AND t.state = 'claimed' ORDER BY t.id`, args...)
		if err != nil {
			return nil, fmt.Errorf("tasks claimed: %w", err)
		}
		for _, t := range ts {
			out[t.AssigneeID] = append(out[t.AssigneeID], t)
		}
	}
	return out, nil
}

// TaskLease implements hub.TaskTx.
func (x Tx) TaskLease(project string) (time.Duration, error) {
	var secs int64
	err := x.DB.QueryRow(`SELECT lease_seconds FROM task_leases WHERE project = ?`, project).Scan(&secs)
	if x.DB.IsNoRows(err) || errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return time.Duration(secs) * time.Second, err
}

// SetTaskLease implements hub.TaskTx.
func (x Tx) SetTaskLease(project string, d time.Duration) error {
	var err error
	if d == 0 {
		_, err = x.DB.Exec(`DELETE FROM task_leases WHERE project = ?`, project)
	} else {
		_, err = x.DB.Exec(`INSERT INTO task_leases (project, lease_seconds) VALUES (?, ?)
			ON CONFLICT (project) DO UPDATE SET lease_seconds = excluded.lease_seconds`, project, int64(d/time.Second))
	}
	if err != nil {
		return fmt.Errorf("task lease of %s: %w", project, err)
	}
	return nil
}
