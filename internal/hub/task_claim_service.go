package hub

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Claim claims task id of caller's project for caller, and reserves its
// paths for caller. Of any number of agents claiming one task at once,
// exactly one wins. Errors: ENOTFOUND, EPRECONDITION (not ready, already
// claimed naming the holder, or its paths held by another agent).
func (ts *Tasks) Claim(ctx context.Context, caller *Agent, id int64) (*Task, []Conflict, error) {
	project := ProjectOr(caller.Project)
	now := ts.clock.Now()
	var t *Task
	err := update(ctx, ts.store, func(tx tasksTx) error {
		cur, err := inProject(tx, id, project)
		if err != nil {
			return err
		}
		lease, err := ts.leaseOf(tx, project)
		if err != nil {
			return err
		}
		ok, err := tx.ClaimTask(id, caller.ID, now, now.Add(lease))
		if err != nil {
			return err
		}
		if !ok {
			return claimRefusal(cur)
		}
		t, err = claimed(tx, id, caller.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	cs, err := ts.reservePaths(ctx, caller, t)
	if err != nil {
		return nil, nil, err
	}
	ts.changed()
	return t, cs, nil
}

// endTx is what ending a claim writes: the task, the holder's reservations
// of its paths, and the messages to those told.
type endTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByName(name string) (*Agent, error)
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// ReservationTx
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	DeleteReservations(ids []int64) (int, error)
	// TaskTx
	AddTaskWatcher(taskID, agentID int64) error
	ReleaseDependents(id int64, now time.Time) ([]*Task, error)
	TaskLease(project string) (time.Duration, error)
	TaskWatchers(taskID int64) ([]int64, error)
	UpdateTask(t *Task) error
}

// Complete marks caller's claimed task id done with note, releases its
// paths, and tells the watchers of each dependent it made ready. It
// returns the task and the dependents made ready. Errors: ENOTFOUND,
// EPRECONDITION (not claimed), EPERMISSION (another agent's), EINVALID.
func (ts *Tasks) Complete(ctx context.Context, caller *Agent, id int64, note string) (*Task, []*Task, error) {
	if err := validateAgentText("note", note, maxTaskNoteBytes); err != nil {
		return nil, nil, err
	}
	now := ts.clock.Now()
	var t *Task
	var ready []*Task
	err := update(ctx, ts.store, func(tx tasksTx) error {
		var err error
		if t, err = inProject(tx, id, ProjectOr(caller.Project)); err != nil {
			return err
		}
		if err := checkHolder(t, caller.ID, "complete"); err != nil {
			return err
		}
		ready, err = finish(tx, t, note, caller.Name, now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	ts.changed()
	return t, ready, nil
}

// finish marks t done with note (by whom: who did it), releases its
// holder's paths, and tells the watchers of the dependents it made ready.
func finish(tx endTx, t *Task, note, by string, now time.Time) (ready []*Task, _ error) {
	holder := t.AssigneeID
	t.State, t.Result, t.DoneAt, t.UpdatedAt, t.LeaseDue = TaskDone, note, now, now, time.Time{}
	if err := tx.UpdateTask(t); err != nil {
		return nil, err
	}
	if err := releaseTaskPaths(tx, t, holder, now); err != nil {
		return nil, err
	}
	ready, err := tx.ReleaseDependents(t.ID, now)
	if err != nil {
		return nil, err
	}
	for _, d := range ready {
		ws, err := tx.TaskWatchers(d.ID)
		if err != nil {
			return nil, err
		}
		body := fmt.Sprintf("Task %s is ready: %s was completed by %s. next_task or claim_task %d takes it.", d, t, by, d.ID)
		if err := tell(tx, d.Project, ws, holder, body, now); err != nil {
			return nil, err
		}
	}
	return ready, nil
}

// Block marks caller's claimed task id blocked with reason, releases it
// and its paths, and tells its creator. Errors: as Complete's.
func (ts *Tasks) Block(ctx context.Context, caller *Agent, id int64, reason string) (*Task, error) {
	if err := validateAgentText("reason", reason, maxTaskNoteBytes); err != nil {
		return nil, err
	}
	now := ts.clock.Now()
	var t *Task
	err := update(ctx, ts.store, func(tx tasksTx) error {
		var err error
		if t, err = inProject(tx, id, ProjectOr(caller.Project)); err != nil {
			return err
		}
		if err := checkHolder(t, caller.ID, "block"); err != nil {
			return err
		}
		t.State, t.Result, t.UpdatedAt, t.LeaseDue = TaskBlocked, reason, now, time.Time{}
		if err := tx.UpdateTask(t); err != nil {
			return err
		}
		if err := releaseTaskPaths(tx, t, caller.ID, now); err != nil {
			return err
		}
		return tell(tx, t.Project, []int64{t.CreatorID}, caller.ID, fmt.Sprintf("Task %s is blocked (%s): %s", t, caller.Name, orNone(reason)), now)
	})
	if err != nil {
		return nil, err
	}
	ts.changed()
	return t, nil
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// TaskPatch is an edit of a task: the fields named in Fields ("title",
// "description", "priority", "labels", "role", "depends_on", "paths"; for
// the admin also "assignee" and "state", with "result") take their values
// from Spec, Assignee, State and Result.
type TaskPatch struct {
	Fields   []string
	Spec     TaskSpec
	Assignee string
	State    TaskState
	Result   string
}

// Update applies p to task id: caller (nil: the admin) edits a task of its
// project that it created; the admin edits any task, and also assigns it
// (claims it for an agent of its project, or returns it to open) and moves
// its state. Errors: EINVALID, ENOTFOUND, EPERMISSION (not the creator),
// EPRECONDITION (a final task; a transition the rules refuse).
func (ts *Tasks) Update(ctx context.Context, caller *Agent, id int64, p TaskPatch) (*Task, []Conflict, error) {
	if len(p.Fields) == 0 {
		return nil, nil, Errorf(EINVALID, "nothing to change: name the fields to change (update_mask, or the fields of the request body)")
	}
	spec := p.Spec
	if spec.Title == "" && !slices.Contains(p.Fields, "title") {
		spec.Title = "unchanged" // checked only when changed
	}
	if err := NormalizeTaskSpec(&spec); err != nil {
		return nil, nil, err
	}
	for _, f := range p.Fields {
		switch f {
		case "title", "description", "priority", "labels", "role", "depends_on", "paths":
		case "assignee", "state", "result":
			if caller != nil {
				return nil, nil, Errorf(EPERMISSION, "only the admin sets %s: claim_task, complete_task and block_task change your own tasks", f)
			}
		default:
			return nil, nil, Errorf(EINVALID, "field %q cannot be changed: expected title, description, priority, labels, role, depends_on or paths", f)
		}
	}
	project := ""
	if caller != nil {
		project = ProjectOr(caller.Project)
	}
	// The cycle check's walk runs here, outside the writer; inside, only
	// the dependencies of the tasks it walked are read again.
	var graph map[int64][]int64
	if slices.Contains(p.Fields, "depends_on") {
		if slices.Contains(spec.DependsOn, id) {
			return nil, nil, cycleError([]int64{id, id})
		}
		graph = map[int64][]int64{}
		if err := view(ctx, ts.store, func(tx tasksTx) error { return walkDependencies(tx, graph, spec.DependsOn) }); err != nil {
			return nil, nil, err
		}
	}
	now := ts.clock.Now()
	var t *Task
	var assignee *Agent
	err := update(ctx, ts.store, func(tx tasksTx) error {
		var err error
		assignee = nil
		if t, err = inProject(tx, id, project); err != nil {
			return err
		}
		if caller != nil && t.CreatorID != caller.ID {
			return Errorf(EPERMISSION, "task %s was created by %s: only its creator or the admin edits it", t, t.Creator)
		}
		if t.State.Final() {
			return Errorf(EPRECONDITION, "task %s is %s, which is final: create a new task instead", t, t.State)
		}
		if err := applySpec(tx, t, spec, p.Fields, graph); err != nil {
			return err
		}
		if caller == nil {
			if assignee, err = ts.adminApply(tx, t, p, now); err != nil {
				return err
			}
		}
		t.UpdatedAt = now
		return tx.UpdateTask(t)
	})
	if err != nil {
		return nil, nil, err
	}
	var cs []Conflict
	if assignee != nil && len(t.Paths) > 0 {
		if cs, err = ts.reservePaths(ctx, assignee, t); err != nil {
			return nil, nil, err
		}
	}
	ts.changed()
	return t, cs, nil
}

// specTx is what applying a task spec reads: the tasks it depends on.
type specTx interface {
	taskByIDTx
	taskDependenciesTx
}

// applySpec sets the fields of t that fields names from spec, checking a
// change of dependencies: tasks of t's project, no cycle, the graph the
// dependencies reach walked before (graph, from walkDependencies) and
// brought up to date here.
func applySpec(tx specTx, t *Task, spec TaskSpec, fields []string, graph map[int64][]int64) error {
	for _, f := range fields {
		switch f {
		case "title":
			t.Title = spec.Title
		case "description":
			t.Description = spec.Description
		case "priority":
			t.Priority = spec.Priority
		case "labels":
			t.Labels = spec.Labels
		case "role":
			t.Role = spec.Role
		case "paths":
			if t.State == TaskClaimed && !slices.Equal(t.Paths, spec.Paths) {
				return Errorf(EPRECONDITION, "task %s is claimed: its paths change only while nobody holds it", t)
			}
			t.Paths = spec.Paths
		case "depends_on":
			if err := recheckDependencies(tx, graph); err != nil {
				return err
			}
			if c := FindCycle(t.ID, spec.DependsOn, graph); c != nil {
				return cycleError(c)
			}
			var err error
			if t.Waiting, err = waitingOn(tx, t.Project, spec.DependsOn); err != nil {
				return err
			}
			t.DependsOn = spec.DependsOn
		}
	}
	return nil
}

// taskDependenciesTx reads the dependencies of tasks.
type taskDependenciesTx interface {
	TaskDependencies(ids []int64) (map[int64][]int64, error)
}

// walkDependencies adds to graph the dependencies of every task reachable
// from roots that graph does not hold yet, breadth first, a layer per
// query. Errors: EINVALID when graph would hold more than
// maxDependencyWalk tasks (see there).
func walkDependencies(tx taskDependenciesTx, graph map[int64][]int64, roots []int64) error {
	layer := roots
	for len(layer) > 0 {
		var ask []int64
		asked := map[int64]bool{}
		for _, id := range layer {
			if _, seen := graph[id]; !seen && !asked[id] {
				asked[id] = true
				ask = append(ask, id)
			}
		}
		if len(ask) == 0 {
			return nil
		}
		if len(graph)+len(ask) > maxDependencyWalk {
			return Errorf(EINVALID, "depends_on reaches more than %d tasks through their own dependencies, the most the hub walks to rule out a cycle: depend on the nearest tasks only (what they wait for is waited for already), or complete some of the chain first", maxDependencyWalk)
		}
		deps, err := tx.TaskDependencies(ask)
		if err != nil {
			return err
		}
		layer = nil
		for _, id := range ask {
			graph[id] = deps[id]
			layer = append(layer, deps[id]...)
		}
	}
	return nil
}

// recheckDependencies brings graph, walked before the write, up to date
// inside it: one read of the dependencies of the tasks it holds, and a
// walk from only those that changed since. Errors: those of
// walkDependencies.
func recheckDependencies(tx taskDependenciesTx, graph map[int64][]int64) error {
	if len(graph) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(graph))
	for id := range graph {
		ids = append(ids, id)
	}
	now, err := tx.TaskDependencies(ids)
	if err != nil {
		return err
	}
	var roots []int64
	for _, id := range ids {
		if !slices.Equal(graph[id], now[id]) {
			graph[id] = now[id]
			roots = append(roots, now[id]...)
		}
	}
	return walkDependencies(tx, graph, roots)
}

// adminApply applies the admin's assignee and state changes of p to t. It
// returns the agent t is now claimed for (its paths to reserve after the
// write).
func (ts *Tasks) adminApply(tx endTx, t *Task, p TaskPatch, now time.Time) (*Agent, error) {
	var assignee *Agent
	tellHolder := func(how string) error {
		return tell(tx, t.Project, []int64{t.AssigneeID}, 0, taskEndedText(t, how), now)
	}
	if slices.Contains(p.Fields, "assignee") {
		switch {
		case p.Assignee == "" && t.State == TaskClaimed:
			if err := tellHolder("was returned to the board by the admin"); err != nil {
				return nil, err
			}
			if err := releaseTaskPaths(tx, t, t.AssigneeID, now); err != nil {
				return nil, err
			}
			returnToOpen(t)
		case p.Assignee != "":
			a, err := tx.AgentByName(p.Assignee)
			if ErrorCode(err) == ENOTFOUND || (err == nil && ProjectOr(a.Project) != t.Project) {
				return nil, Errorf(ENOTFOUND, "no agent named %q in project %s: a task is assigned within its project", p.Assignee, t.Project)
			} else if err != nil {
				return nil, err
			}
			if a.Disabled() {
				return nil, Errorf(EPRECONDITION, "agent %q is disabled: enable it first (hubctl agent enable %s)", a.Name, a.Name)
			}
			if t.State != TaskClaimed && t.State != TaskOpen && t.State != TaskBlocked {
				return nil, Errorf(EPRECONDITION, "task %s is %s: only an open, blocked or claimed task is assigned", t, t.State)
			}
			if t.State == TaskClaimed && t.AssigneeID != a.ID {
				if err := tellHolder("was reassigned to " + a.Name + " by the admin"); err != nil {
					return nil, err
				}
				if err := releaseTaskPaths(tx, t, t.AssigneeID, now); err != nil {
					return nil, err
				}
			}
			if t.AssigneeID != a.ID || t.State != TaskClaimed {
				lease, err := ts.leaseOf(tx, t.Project)
				if err != nil {
					return nil, err
				}
				t.State, t.AssigneeID, t.Assignee, t.ClaimedAt, t.LeaseDue = TaskClaimed, a.ID, a.Name, now, now.Add(lease)
				if err := tx.AddTaskWatcher(t.ID, a.ID); err != nil {
					return nil, err
				}
				if err := tell(tx, t.Project, []int64{a.ID}, 0, fmt.Sprintf("The admin assigned you task %s: checkpoint naming it as you work, then complete_task %d.", t, t.ID), now); err != nil {
					return nil, err
				}
				assignee = a
			}
		}
	}
	if slices.Contains(p.Fields, "state") {
		if err := adminTransition(t, p.State); err != nil {
			return nil, err
		}
		if t.State != p.State {
			holder := t.AssigneeID
			if t.State == TaskClaimed {
				if err := tellHolder(fmt.Sprintf("was set %s by the admin", p.State)); err != nil {
					return nil, err
				}
				if err := releaseTaskPaths(tx, t, holder, now); err != nil {
					return nil, err
				}
			}
			switch p.State {
			case TaskDone:
				if _, err := finish(tx, t, p.Result, SenderAdmin, now); err != nil {
					return nil, err
				}
			case TaskOpen:
				returnToOpen(t)
			default:
				t.State, t.Result, t.LeaseDue = p.State, p.Result, time.Time{}
			}
			assignee = nil
		}
	}
	return assignee, nil
}

// leaseTx is what judging claims reads and writes: tasks, their holders
// and the holders' liveness, their reservations, the events and messages
// it records.
type leaseTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	// EventTx
	InsertEvent(e *Event) error
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// MessageTx
	InsertMessage(m *Message, deliveries []Delivery) error
	// ReservationTx
	ActiveReservations(now time.Time, agentID int64) ([]*Reservation, error)
	DeleteReservations(ids []int64) (int, error)
	// TaskTx
	SetTaskLeaseDue(id int64, at time.Time) error
	TaskLease(project string) (time.Duration, error)
	UpdateTask(t *Task) error
}

// ExpireLeases is the orchestrator's task job at now: it looks at up to
// limit claims whose lease may have lapsed, returns to open those whose
// holder showed no activity within the project's lease (or is disabled),
// recording a task_returned event and telling the holder and the creator,
// and moves the others' next look to when their lease can lapse. It
// returns how many it returned and whether more claims are due. It looks
// for a due claim in a read first, and takes a turn of the writer only
// when it found one.
func (ts *Tasks) ExpireLeases(ctx context.Context, now time.Time, limit int) (returned int, more bool, err error) {
	var due []*Task
	if err := view(ctx, ts.store, func(tx tasksTx) (err error) { due, err = tx.DueTaskLeases(now, 1); return err }); len(due) == 0 || err != nil {
		if err != nil {
			err = fmt.Errorf("expire task leases: %w", err)
		}
		return 0, false, err
	}
	err = update(ctx, ts.store, func(tx tasksTx) error {
		returned = 0
		due, err := tx.DueTaskLeases(now, limit)
		if err != nil {
			return err
		}
		more = len(due) == limit
		for _, t := range due {
			back, err := ts.judgeLease(tx, t, now)
			if err != nil {
				return err
			}
			if back {
				returned++
			}
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("expire task leases: %w", err)
	}
	if returned > 0 {
		ts.changed()
	}
	return returned, more, nil
}

// judgeLease applies DecideLease to claimed task t at now and writes the
// outcome; it reports whether t went back to open.
func (ts *Tasks) judgeLease(tx leaseTx, t *Task, now time.Time) (bool, error) {
	holder, err := tx.AgentByID(t.AssigneeID)
	if ErrorCode(err) == ENOTFOUND { // deleted: its claim goes with it
		returnToOpen(t)
		t.UpdatedAt = now
		return true, tx.UpdateTask(t)
	} else if err != nil {
		return false, err
	}
	st, err := tx.LivenessState(holder.ID)
	if err != nil {
		return false, err
	}
	last := st.LastConsciousActivity()
	if holder.HeartbeatStartedAt.After(last) {
		last = holder.HeartbeatStartedAt
	}
	lease, err := ts.leaseOf(tx, t.Project)
	if err != nil {
		return false, err
	}
	lapsed, next := DecideLease(t.ClaimedAt, last, lease, holder.Disabled(), now)
	if !lapsed {
		return false, tx.SetTaskLeaseDue(t.ID, next)
	}
	why := fmt.Sprintf("no activity from %s since %s (lease %s)", holder.Name, latest(t.ClaimedAt, last).UTC().Format(time.RFC3339), lease)
	if holder.Disabled() {
		why = holder.Name + " was disabled"
	}
	if err := releaseTaskPaths(tx, t, holder.ID, now); err != nil {
		return false, err
	}
	returnToOpen(t)
	t.UpdatedAt = now
	if err := tx.UpdateTask(t); err != nil {
		return false, err
	}
	if err := tx.InsertEvent(&Event{AgentID: holder.ID, Kind: EventTaskReturned, Detail: fmt.Sprintf("task %s returned to open: %s", t, why), CreatedAt: now}); err != nil {
		return false, err
	}
	return true, tell(tx, t.Project, []int64{holder.ID, t.CreatorID}, 0, fmt.Sprintf("Task %s went back to open: %s.", t, why), now)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
