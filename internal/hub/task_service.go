package hub

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// TaskTx stores the task board.
type TaskTx interface {
	// InsertTask inserts t with its dependencies (t.Waiting as given) and
	// sets t.ID.
	InsertTask(t *Task) error
	// TaskByID returns task id with its dependencies and its holder's
	// name. Errors: ENOTFOUND.
	TaskByID(id int64) (*Task, error)
	// ListTasks returns the tasks q selects, by ID, with their
	// dependencies and holders' names.
	ListTasks(q TaskQuery) ([]*Task, error)
	// UpdateTask stores every field of t but its ID, project, creator,
	// thread and creation time, and replaces its dependencies with
	// t.DependsOn. Errors: ENOTFOUND.
	UpdateTask(t *Task) error
	// ClaimTask claims task id for agentID at now, its lease looked at
	// again at leaseDue, if and only if it is still open and ready: a
	// conditional write, so that of any number of claimers, on any number
	// of handles or replicas, exactly one is told true.
	ClaimTask(id, agentID int64, now, leaseDue time.Time) (bool, error)
	// ReadyTasks returns up to limit ready tasks of project that fit
	// labels and role (TaskFits), highest priority first, then oldest,
	// without their dependencies (all done).
	ReadyTasks(project string, labels []string, role string, limit int) ([]*Task, error)
	// TaskDependencies returns the dependencies of the tasks ids, by task
	// (tasks without any are left out).
	TaskDependencies(ids []int64) (map[int64][]int64, error)
	// TaskDependents returns the IDs of the tasks that depend on id.
	TaskDependents(id int64) ([]int64, error)
	// ReleaseDependents counts one dependency fewer not done for every
	// task depending on id (just done) and returns those it made ready.
	ReleaseDependents(id int64, now time.Time) ([]*Task, error)
	// DueTaskLeases returns up to limit claimed tasks whose LeaseDue is at
	// or before now, the earliest first (served by an index).
	DueTaskLeases(now time.Time, limit int) ([]*Task, error)
	// SetTaskLeaseDue moves the time claimed task id is looked at next.
	SetTaskLeaseDue(id int64, at time.Time) error
	// AddTaskWatcher records that agentID is told about task id (its
	// creator, its claimers); adding again is not an error.
	AddTaskWatcher(taskID, agentID int64) error
	// TaskWatchers returns the IDs of the agents watching task id.
	TaskWatchers(taskID int64) ([]int64, error)
	// TaskCheckpoints returns the newest checkpoints naming task id,
	// newest first, at most limit.
	TaskCheckpoints(id int64, limit int) ([]*Checkpoint, error)
	// TasksClaimedBy returns the tasks each of agentIDs holds, by agent,
	// each agent's by ID; an agent holding none has no entry. It reads
	// only claimed tasks of those agents (an index on the holder).
	TasksClaimedBy(agentIDs []int64) (map[int64][]*Task, error)
	// TaskLease returns project's own task lease, 0 when it has none.
	TaskLease(project string) (time.Duration, error)
	// SetTaskLease stores project's own task lease (0 removes it).
	SetTaskLease(project string, d time.Duration) error
}

// TaskQuery selects tasks. Zero fields select all.
type TaskQuery struct {
	Project      string
	State        TaskState
	Ready        bool
	Label        string
	AfterID      int64
	UpdatedSince time.Time
	Limit        int // > 0
}

// Event kinds recorded by the task board, on the holder.
const (
	// EventTaskReturned: a claim lapsed (no activity within the lease, or
	// the holder disabled) and the task went back to open.
	EventTaskReturned EventKind = "task_returned"
)

// taskReserver reserves paths through the reservation rules (satisfied by
// *Reservations).
type taskReserver interface {
	ReservePaths(ctx context.Context, caller *Agent, req ReservationRequest) ([]*Reservation, []Conflict, error)
}

// Tasks is the task board: per project, tasks that agents claim, work on
// with checkpoints naming them, and complete (task.go has the rules).
type Tasks struct {
	*core
	store   txs[tasksTx] // the store methods it uses
	reserve taskReserver
}

// tasksTx is what the board's transactions see of the store: the tasks,
// and the nouns a task touches (its holder and watchers, their liveness,
// reservations, events and messages, projects).
type tasksTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// BudgetTx
	BudgetHolds(agentID int64, project string, day time.Time) (bool, error)
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// ProjectTx
	ProjectExists(name string) (bool, error)
	// ReservationTx
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	DeleteReservations(ids []int64) (int, error)
	// TaskTx
	AddTaskWatcher(taskID, agentID int64) error
	ClaimTask(id, agentID int64, now, leaseDue time.Time) (bool, error)
	DueTaskLeases(now time.Time, limit int) ([]*Task, error)
	InsertTask(t *Task) error
	ListTasks(q TaskQuery) ([]*Task, error)
	ReadyTasks(project string, labels []string, role string, limit int) ([]*Task, error)
	ReleaseDependents(id int64, now time.Time) ([]*Task, error)
	SetTaskLease(project string, d time.Duration) error
	SetTaskLeaseDue(id int64, at time.Time) error
	TaskByID(id int64) (*Task, error)
	TaskCheckpoints(id int64, limit int) ([]*Checkpoint, error)
	TaskDependencies(ids []int64) (map[int64][]int64, error)
	TaskDependents(id int64) ([]int64, error)
	TaskLease(project string) (time.Duration, error)
	TaskWatchers(taskID int64) ([]int64, error)
	UpdateTask(t *Task) error
}

// NewTasks returns the task board over c; its claims reserve paths
// through reserve (the hub's Reservations).
func NewTasks(c *Core, reserve taskReserver) *Tasks {
	return &Tasks{core: c.core, store: txsOf[tasksTx](c.store), reserve: reserve}
}

// changed tells the dashboard's stream that tasks changed. The parked
// next_task calls that a task left ready fits wake at the commit that
// left it so (Changes.Ready).
func (ts *Tasks) changed() {
	ts.waiters.feed.Publish(TopicTasks)
}

// TasksReady wakes the parked next_task calls of project: tasks became
// ready there in another process (a replica on the same database).
func (ts *Tasks) TasksReady(project string) {
	ts.wake(&Changes{projects: []string{project}})
	ts.waiters.feed.Publish(TopicTasks)
}

// taskLeaseTx reads a project's task lease.
type taskLeaseTx interface {
	TaskLease(project string) (time.Duration, error)
}

// leaseOf returns project's task lease: its own, else the hub's.
func (ts *Tasks) leaseOf(tx taskLeaseTx, project string) (time.Duration, error) {
	d, err := tx.TaskLease(project)
	if err != nil || d > 0 {
		return d, err
	}
	if ts.cfg.TaskLease == 0 {
		return DefaultTaskLease, nil
	}
	return ts.cfg.TaskLease, nil
}

// taskByIDTx reads one task.
type taskByIDTx interface {
	TaskByID(id int64) (*Task, error)
}

// inProject returns task id when it belongs to project ("": any, the
// admin's view). Errors: ENOTFOUND (also for another project's task).
func inProject(tx taskByIDTx, id int64, project string) (*Task, error) {
	t, err := tx.TaskByID(id)
	if ErrorCode(err) == ENOTFOUND || (err == nil && project != "" && t.Project != project) {
		return nil, taskNotFound(id)
	}
	return t, err
}

// creatorOf returns the creator's name and ID: caller's, or the admin's.
func creatorOf(caller *Agent) (string, int64) {
	if caller == nil {
		return SenderAdmin, 0
	}
	return caller.Name, caller.ID
}

// Create adds a task made of spec to project (the caller's own for an
// agent; caller nil is the admin). Errors: EINVALID, ENOTFOUND (project, a
// dependency).
func (ts *Tasks) Create(ctx context.Context, caller *Agent, project string, spec TaskSpec) (*Task, error) {
	out, err := ts.Import(ctx, caller, project, []ImportItem{{Spec: spec}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ImportItem is one task of an import: After names earlier items of the
// same import (by Key) that it depends on, besides Spec.DependsOn.
type ImportItem struct {
	Key   string
	Spec  TaskSpec
	After []string
}

// Import adds items to project in one transaction, all or none, and
// returns them in order. Errors: EINVALID (an item, a key that names no
// earlier item), ENOTFOUND (project, a dependency).
func (ts *Tasks) Import(ctx context.Context, caller *Agent, project string, items []ImportItem) ([]*Task, error) {
	if caller != nil {
		project = ProjectOr(caller.Project)
	} else if err := ValidateProjectName(ProjectOr(project)); err != nil {
		return nil, err
	}
	project = ProjectOr(project)
	if len(items) == 0 || len(items) > maxTaskImport {
		return nil, Errorf(EINVALID, "an import holds %d tasks: expected 1 to %d", len(items), maxTaskImport)
	}
	for i := range items {
		if err := NormalizeTaskSpec(&items[i].Spec); err != nil {
			if len(items) == 1 {
				return nil, err
			}
			return nil, Errorf(EINVALID, "task %d (%q): %s", i+1, items[i].Spec.Title, ErrorMessage(err))
		}
	}
	now := ts.clock.Now()
	name, creatorID := creatorOf(caller)
	var out []*Task
	err := update(ctx, ts.store, func(tx tasksTx) error {
		out = out[:0]
		if caller == nil {
			if err := requireProject(tx, project); err != nil {
				return err
			}
		}
		byKey := map[string]int64{}
		for i, it := range items {
			deps := slices.Clone(it.Spec.DependsOn)
			for _, k := range it.After {
				id, ok := byKey[k]
				if !ok {
					return Errorf(EINVALID, "task %d (%q) comes after %q, which names no earlier task of this import", i+1, it.Spec.Title, k)
				}
				deps = append(deps, id)
			}
			if deps = sortedUnique(deps); len(deps) > maxTaskDeps {
				return Errorf(EINVALID, "task %d (%q) depends on %d tasks (depends_on and after together); the limit is %d: group them under fewer tasks", i+1, it.Spec.Title, len(deps), maxTaskDeps)
			}
			t := &Task{Project: project, Title: it.Spec.Title, Description: it.Spec.Description, State: TaskOpen,
				Priority: it.Spec.Priority, Labels: it.Spec.Labels, Role: it.Spec.Role, Creator: name, CreatorID: creatorID,
				DependsOn: deps, Paths: it.Spec.Paths, CreatedAt: now, UpdatedAt: now}
			var err error
			if t.Waiting, err = waitingOn(tx, project, t.DependsOn); err != nil {
				return err
			}
			if err := insertTask(tx, t); err != nil {
				return err
			}
			if it.Key != "" {
				byKey[it.Key] = t.ID
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ts.changed()
	return out, nil
}

// waitingOn checks that deps are tasks of project and returns how many of
// them are not done. Errors: ENOTFOUND.
func waitingOn(tx taskByIDTx, project string, deps []int64) (int, error) {
	n := 0
	for _, d := range deps {
		dt, err := inProject(tx, d, project)
		if err != nil {
			return 0, Errorf(ENOTFOUND, "depends_on: %s", ErrorMessage(err))
		}
		if dt.State != TaskDone {
			n++
		}
	}
	return n, nil
}

// taskCreatorKind is the sender kind of t's thread: its creator's.
func taskCreatorKind(t *Task) SenderKind {
	if t.CreatorID == 0 {
		return ByAdmin
	}
	return ByAgent
}

// insertTaskTx writes a task with its thread.
type insertTaskTx interface {
	insertMessageTx
	InsertTask(t *Task) error
	AddTaskWatcher(taskID, agentID int64) error
}

// insertTask writes a new task t: its thread (a message from its creator,
// delivered to nobody, that discussions reply to), its row, and its
// creator as a watcher.
func insertTask(tx insertTaskTx, t *Task) error {
	m := &Message{Project: t.Project, From: t.Creator, SenderKind: taskCreatorKind(t), Body: "Task: " + t.Title + " (reply here to discuss it)",
		Kind: KindSystem, CreatedAt: t.CreatedAt, Priority: PriorityLow}
	if err := tx.InsertMessage(m, nil); err != nil {
		return err
	}
	t.ThreadID = m.ID
	if err := tx.InsertTask(t); err != nil {
		return err
	}
	if t.CreatorID != 0 {
		return tx.AddTaskWatcher(t.ID, t.CreatorID)
	}
	return nil
}

// List returns the tasks q selects (q.Project set for an agent: its own)
// and the after_id of the next page (0 when none). Errors: EINVALID.
func (ts *Tasks) List(ctx context.Context, q TaskQuery) ([]*Task, int64, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Limit > ts.cfg.MaxListLimit {
		return nil, 0, Errorf(EINVALID, "limit %d is above the largest page, %d: page with after_id", q.Limit, ts.cfg.MaxListLimit)
	}
	if q.Label != "" {
		if _, err := normalizeLabels([]string{q.Label}); err != nil {
			return nil, 0, err
		}
	}
	var out []*Task
	q.Limit++
	err := view(ctx, ts.store, func(tx tasksTx) (err error) {
		out, err = tx.ListTasks(q)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) == q.Limit {
		out = out[:q.Limit-1]
		next = out[len(out)-1].ID
	}
	return out, next, nil
}

// Get returns task id of project ("": any) with its dependents and the
// latest checkpoints naming it. Errors: ENOTFOUND.
func (ts *Tasks) Get(ctx context.Context, project string, id int64) (*Task, error) {
	var t *Task
	err := view(ctx, ts.store, func(tx tasksTx) error {
		var err error
		if t, err = inProject(tx, id, project); err != nil {
			return err
		}
		if t.Dependents, err = tx.TaskDependents(id); err != nil {
			return err
		}
		t.Checkpoints, err = tx.TaskCheckpoints(id, taskCheckpointsShown)
		return err
	})
	return t, err
}

// SetLease sets project's task lease (0: the hub's) and returns the lease
// in force. Errors: EINVALID, ENOTFOUND (project).
func (ts *Tasks) SetLease(ctx context.Context, project string, d time.Duration) (time.Duration, error) {
	if err := ValidateProjectName(project); err != nil {
		return 0, err
	}
	if err := CheckTaskLease(d); err != nil {
		return 0, err
	}
	var in time.Duration
	err := update(ctx, ts.store, func(tx tasksTx) error {
		if err := requireProject(tx, project); err != nil {
			return err
		}
		if err := tx.SetTaskLease(project, d); err != nil {
			return err
		}
		var err error
		in, err = ts.leaseOf(tx, project)
		return err
	})
	return in, err
}

// releasePathsTx reads and deletes an agent's path reservations.
type releasePathsTx interface {
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	DeleteReservations(ids []int64) (int, error)
}

// releaseTaskPaths releases holder's reservations of t's paths (a task's
// paths are reserved while it is claimed; they go when it leaves its
// claim).
func releaseTaskPaths(tx releasePathsTx, t *Task, holder int64, now time.Time) error {
	if len(t.Paths) == 0 || holder == 0 {
		return nil
	}
	mine, err := tx.ActiveReservations(now, holder)
	if err != nil {
		return err
	}
	var ids []int64
	for _, r := range mine {
		if slices.Contains(t.Paths, r.Pattern) {
			ids = append(ids, r.ID)
		}
	}
	_, err = tx.DeleteReservations(ids)
	return err
}

// tellTx is what telling agents about a task reads and writes.
type tellTx interface {
	agentByIDTx
	insertMessageTx
}

// tell inserts a message from the orchestrator to agents (the IDs not 0,
// not skip), about a task.
func tell(tx tellTx, project string, agents []int64, skip int64, body string, now time.Time) error {
	var ds []Delivery
	var names []string
	seen := map[int64]bool{}
	for _, id := range agents {
		if id == 0 || id == skip || seen[id] {
			continue
		}
		seen[id] = true
		a, err := tx.AgentByID(id)
		if ErrorCode(err) == ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		if a.Disabled() {
			continue
		}
		ds, names = append(ds, Delivery{AgentID: id}), append(names, a.Name)
	}
	if len(ds) == 0 {
		return nil
	}
	m := &Message{Project: project, From: SenderOrchestrator, SenderKind: ByHub, To: names, Body: body, Kind: KindSystem, CreatedAt: now, Priority: PriorityNormal}
	return tx.InsertMessage(m, ds)
}

// claimedTasksTx reads the tasks agents hold.
type claimedTasksTx interface {
	TasksClaimedBy(agentIDs []int64) (map[int64][]*Task, error)
}

// claimedTaskNotes returns, for each of agentIDs that holds tasks, the
// sentence naming them (claimedTaskNote), in one read.
func claimedTaskNotes(tx claimedTasksTx, agentIDs []int64) (map[int64]string, error) {
	if len(agentIDs) == 0 {
		return nil, nil
	}
	held, err := tx.TasksClaimedBy(agentIDs)
	if err != nil {
		return nil, err
	}
	notes := make(map[int64]string, len(held))
	for id, ts := range held {
		notes[id] = claimedTaskNote(ts)
	}
	return notes, nil
}

// CheckTaskNamed returns the task a checkpoint or activity log of caller
// names (0: none), checking that caller holds it. Errors: ENOTFOUND,
// EPRECONDITION, EPERMISSION.
func CheckTaskNamed(tx taskByIDTx, caller *Agent, id int64) error {
	if id == 0 {
		return nil
	}
	t, err := inProject(tx, id, ProjectOr(caller.Project))
	if err != nil {
		return err
	}
	return checkHolder(t, caller.ID, "report on")
}

// taskEndedText is what the holder of a task is told when someone else
// takes it off them.
func taskEndedText(t *Task, how string) string {
	return fmt.Sprintf("Task %s %s: stop working on it (list_tasks shows the board).", t, how)
}
