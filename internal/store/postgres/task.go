package postgres

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/tasksql"
)

// This file implements hub.TaskTx with the statements of tasksql.

// taskDB is the transaction as tasksql.DB: its "?" placeholders become
// PostgreSQL's numbered ones.
type taskDB struct{ t *Tx }

// dollars rewrites the "?" placeholders of q as $1, $2... (tasksql's
// statements hold no other question mark).
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d taskDB) Exec(q string, args ...any) (int64, error) {
	tag, err := d.t.exec(dollars(q), args...)
	if err != nil {
		return 0, mapErr(err)
	}
	return tag.RowsAffected(), nil
}

func (d taskDB) Query(q string, args ...any) (tasksql.Rows, func(), error) {
	rows, err := d.t.query(dollars(q), args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

func (d taskDB) QueryRow(q string, args ...any) row.Scanner { return d.t.queryRow(dollars(q), args...) }

func (taskDB) IsNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// tasks is the task queries of t; a task left ready NOTIFYs every
// replica's listener with its project, so that their parked next_task
// calls look again (Reports.TasksReady).
func (t *Tx) tasks() tasksql.Tx {
	return tasksql.Tx{DB: taskDB{t}, Ready: func(project string) error {
		_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.tasks, project)
		return err
	}}
}

// InsertTask implements hub.TaskTx.
func (t *Tx) InsertTask(x *hub.Task) error { return t.tasks().InsertTask(x) }

// TaskByID implements hub.TaskTx.
func (t *Tx) TaskByID(id int64) (*hub.Task, error) { return t.tasks().TaskByID(id) }

// ListTasks implements hub.TaskTx.
func (t *Tx) ListTasks(q hub.TaskQuery) ([]*hub.Task, error) { return t.tasks().ListTasks(q) }

// UpdateTask implements hub.TaskTx.
func (t *Tx) UpdateTask(x *hub.Task) error { return t.tasks().UpdateTask(x) }

// ClaimTask implements hub.TaskTx.
func (t *Tx) ClaimTask(id, agentID int64, now, leaseDue time.Time) (bool, error) {
	return t.tasks().ClaimTask(id, agentID, now, leaseDue)
}

// ReadyTasks implements hub.TaskTx.
func (t *Tx) ReadyTasks(project string, labels []string, role string, limit int) ([]*hub.Task, error) {
	return t.tasks().ReadyTasks(project, labels, role, limit)
}

// TaskDependencies implements hub.TaskTx.
func (t *Tx) TaskDependencies(ids []int64) (map[int64][]int64, error) {
	return t.tasks().TaskDependencies(ids)
}

// TaskDependents implements hub.TaskTx.
func (t *Tx) TaskDependents(id int64) ([]int64, error) { return t.tasks().TaskDependents(id) }

// ReleaseDependents implements hub.TaskTx.
func (t *Tx) ReleaseDependents(id int64, now time.Time) ([]*hub.Task, error) {
	return t.tasks().ReleaseDependents(id, now)
}

// DueTaskLeases implements hub.TaskTx.
func (t *Tx) DueTaskLeases(now time.Time, limit int) ([]*hub.Task, error) {
	return t.tasks().DueTaskLeases(now, limit)
}

// SetTaskLeaseDue implements hub.TaskTx.
func (t *Tx) SetTaskLeaseDue(id int64, at time.Time) error { return t.tasks().SetTaskLeaseDue(id, at) }

// AddTaskWatcher implements hub.TaskTx.
func (t *Tx) AddTaskWatcher(taskID, agentID int64) error {
	return t.tasks().AddTaskWatcher(taskID, agentID)
}

// TaskWatchers implements hub.TaskTx.
func (t *Tx) TaskWatchers(taskID int64) ([]int64, error) { return t.tasks().TaskWatchers(taskID) }

// TaskCheckpoints implements hub.TaskTx.
func (t *Tx) TaskCheckpoints(id int64, limit int) ([]*hub.Checkpoint, error) {
	return t.tasks().TaskCheckpoints(id, limit)
}

// TasksClaimedBy implements hub.TaskTx.
func (t *Tx) TasksClaimedBy(agentID int64) ([]*hub.Task, error) {
	return t.tasks().TasksClaimedBy(agentID)
}

// TaskLease implements hub.TaskTx.
func (t *Tx) TaskLease(project string) (time.Duration, error) { return t.tasks().TaskLease(project) }

// SetTaskLease implements hub.TaskTx.
func (t *Tx) SetTaskLease(project string, d time.Duration) error {
	return t.tasks().SetTaskLease(project, d)
}
