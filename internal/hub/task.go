package hub

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The task board: shared work, per project.
//
//   - A task belongs to a project and is never seen, claimed or named across
//     projects, linked or not (as reservations: project.go).
//   - States: open → claimed → done; claimed → blocked (its holder, with a
//     reason) or back to open (its lease lapsed, or the admin returned it);
//     blocked → open (its creator or the admin); any state but done →
//     cancelled (the admin). done and cancelled are final.
//   - A task is ready when it is open and every task it depends on is done.
//     The store keeps, per task, the number of its dependencies not done
//     (Task.Waiting), so the ready queue is an index, not a walk of the graph.
//   - A claim is a lease: it lasts while the holder shows activity (activity
//     logs, checkpoints, heartbeats) within the project's task lease. The
//     hub writes nothing per activity: the orchestrator looks at a claim
//     when its lease may have lapsed (Task.LeaseDue) and either moves that
//     time to the holder's last activity plus the lease or returns the task
//     to open (DecideLease).
//   - A claimed task with paths reserves them exclusively for its holder
//     (the reservation rules, conflicts named); they are released when the
//     task leaves its claim.

// TaskState is where a task stands.
type TaskState string

// Task states.
const (
	TaskOpen      TaskState = "open"
	TaskClaimed   TaskState = "claimed"
	TaskBlocked   TaskState = "blocked"
	TaskDone      TaskState = "done"
	TaskCancelled TaskState = "cancelled"
)

// ParseTaskState returns the state named s. Errors: EINVALID.
func ParseTaskState(s string) (TaskState, error) {
	switch st := TaskState(s); st {
	case TaskOpen, TaskClaimed, TaskBlocked, TaskDone, TaskCancelled:
		return st, nil
	}
	return "", Errorf(EINVALID, "state %q is not a task state: expected open, claimed, blocked, done or cancelled", s)
}

// Final reports whether nothing changes a task in state s any more.
func (s TaskState) Final() bool { return s == TaskDone || s == TaskCancelled }

// Task limits and defaults.
const (
	DefaultTaskLease  = 30 * time.Minute
	MinTaskLease      = time.Minute
	MaxTaskLease      = 7 * 24 * time.Hour
	maxTaskTitleBytes = 200
	maxTaskDescBytes  = 16 << 10
	maxTaskNoteBytes  = 4 << 10
	maxTaskLabels     = 16
	maxTaskDeps       = 50
	// maxDependencyWalk is how many tasks a change of depends_on may reach
	// through their own dependencies: the cycle check walks them all.
	maxDependencyWalk    = 1000
	maxTaskPaths         = 50
	maxTaskImport        = 5000
	taskCheckpointsShown = 5
)

// Task is one piece of work on a project's board.
type Task struct {
	ID          int64
	Project     string
	Title       string
	Description string
	State       TaskState
	Priority    Priority
	Labels      []string
	Role        string
	Creator     string // an agent's name, or SenderAdmin
	CreatorID   int64  // 0 for the admin
	AssigneeID  int64  // the holder while claimed, else 0
	Assignee    string // filled when read back
	DependsOn   []int64
	Paths       []string
	// Waiting is the number of DependsOn not done yet (kept by the store's
	// callers: InsertTask, CompleteTasks).
	Waiting   int
	ThreadID  int64 // the message to reply to about the task
	Result    string
	CreatedAt time.Time
	ClaimedAt time.Time
	DoneAt    time.Time
	UpdatedAt time.Time
	// LeaseDue is when the orchestrator next looks at the claim (zero when
	// not claimed): no earlier than the lease can lapse.
	LeaseDue time.Time

	// Filled by Tasks.Get only.
	Dependents  []int64
	Checkpoints []*Checkpoint
}

// Ready reports whether t is open with every dependency done.
func (t *Task) Ready() bool { return t.State == TaskOpen && t.Waiting == 0 }

// String names the task for messages: #12 "title".
func (t *Task) String() string { return fmt.Sprintf("#%d %q", t.ID, t.Title) }

// TaskSpec is what a new task is made of, or what an edit changes.
type TaskSpec struct {
	Title       string
	Description string
	Priority    Priority
	Labels      []string
	Role        string
	DependsOn   []int64
	Paths       []string
}

// ParseTaskID parses a task ID given as text in field. Errors: EINVALID.
func ParseTaskID(field, s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, Errorf(EINVALID, "%s %q is not a task ID: expected a positive number such as 12 (list_tasks shows them)", field, s)
	}
	return id, nil
}

// FormatTaskID returns a task ID as the API shows it ("" for 0).
func FormatTaskID(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// taskNotFound is the answer for a task that does not exist or is out of
// the caller's reach: the same words for both.
func taskNotFound(id int64) error {
	return Errorf(ENOTFOUND, "no task %d in this project: list_tasks shows the project's tasks", id)
}

// NormalizeTaskSpec checks s and puts it in canonical form: text trimmed,
// priority normal when unset, labels lower-case, sorted and unique, paths
// normalized and unique, dependencies unique. Errors: EINVALID.
func NormalizeTaskSpec(s *TaskSpec) error {
	s.Title = strings.TrimSpace(s.Title)
	if s.Title == "" {
		return Errorf(EINVALID, "title is empty: say in one line what the task is")
	}
	if len(s.Title) > maxTaskTitleBytes {
		return Errorf(EINVALID, "title is %d bytes; the limit is %d: put the detail in description", len(s.Title), maxTaskTitleBytes)
	}
	if err := checkLine("title", s.Title); err != nil {
		return err
	}
	s.Description = strings.TrimSpace(s.Description)
	if err := validateAgentText("description", s.Description, maxTaskDescBytes); err != nil {
		return err
	}
	var err error
	if s.Priority, err = CheckPriority(s.Priority); err != nil {
		return err
	}
	if s.Labels, err = normalizeLabels(s.Labels); err != nil {
		return err
	}
	s.Role = strings.TrimSpace(s.Role)
	if err := validateAgentText("role", s.Role, maxNameLen); err != nil {
		return err
	}
	if err := checkLine("role", s.Role); err != nil {
		return err
	}
	if len(s.DependsOn) > maxTaskDeps {
		return Errorf(EINVALID, "depends_on names %d tasks; the limit is %d: group them under fewer tasks", len(s.DependsOn), maxTaskDeps)
	}
	for _, id := range s.DependsOn {
		if id <= 0 {
			return Errorf(EINVALID, "depends_on holds %d, which is not a task ID", id)
		}
	}
	s.DependsOn = sortedUnique(s.DependsOn)
	if len(s.Paths) > maxTaskPaths {
		return Errorf(EINVALID, "paths names %d patterns; the limit is %d: reserve a directory instead", len(s.Paths), maxTaskPaths)
	}
	paths := make([]string, 0, len(s.Paths))
	for _, p := range s.Paths {
		n, err := NormalizePattern(p)
		if err != nil {
			return err
		}
		if !slices.Contains(paths, n) {
			paths = append(paths, n)
		}
	}
	if coversProject(paths...) {
		return Errorf(EINVALID, "paths %s cover the whole project, and a task's paths are reserved exclusively for its holder: name the directories the task touches (src/parser/, docs/*.md)", shortPatterns(paths))
	}
	s.Paths = paths
	return nil
}

// normalizeLabels returns labels lower-cased, sorted and unique. Errors:
// EINVALID (a label that is not a name, too many labels).
func normalizeLabels(labels []string) ([]string, error) {
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		l = strings.ToLower(strings.TrimSpace(l))
		if !isName(l) {
			return nil, Errorf(EINVALID, "label %q is invalid: expected 1-63 characters of a-z, 0-9, '.', '_' or '-', such as backend or p1", l)
		}
		out = append(out, l)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxTaskLabels {
		return nil, Errorf(EINVALID, "%d labels; the limit is %d", len(out), maxTaskLabels)
	}
	return out, nil
}

func sortedUnique(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// TaskFits reports whether t is for an agent asking for labels (t carries
// every one) and role (t is for that role or for any).
func TaskFits(t *Task, labels []string, role string) bool {
	if t.Role != "" && t.Role != role {
		return false
	}
	for _, l := range labels {
		if !slices.Contains(t.Labels, l) {
			return false
		}
	}
	return true
}

// FindCycle returns the cycle that making task id depend on deps would
// close, as the task IDs along it from id back to id, or nil. graph holds
// the dependencies of every task reachable from deps (a task missing from
// it has none).
func FindCycle(id int64, deps []int64, graph map[int64][]int64) []int64 {
	// Depth-first from each dependency, looking for id; path is the walk.
	seen := map[int64]bool{}
	var path []int64
	var walk func(n int64) bool
	walk = func(n int64) bool {
		path = append(path, n)
		if n == id {
			return true
		}
		if !seen[n] {
			seen[n] = true
			for _, d := range graph[n] {
				if walk(d) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	for _, d := range deps {
		path = path[:0]
		if walk(d) {
			return append([]int64{id}, path...)
		}
	}
	return nil
}

// cycleError names a dependency cycle: #3 → #5 → #3.
func cycleError(cycle []int64) error {
	parts := make([]string, len(cycle))
	for i, id := range cycle {
		parts[i] = "#" + strconv.FormatInt(id, 10)
	}
	return Errorf(EINVALID, "depends_on would close a cycle %s (each task waits for the next): drop one of these dependencies", strings.Join(parts, " → "))
}

// DecideLease judges a claim at now: the holder's lease runs from its last
// sign of work (the claim itself, an activity log, a checkpoint or a
// heartbeat, whichever is newest) for lease. It returns whether the claim
// lapsed (also when the holder is disabled), and otherwise when to look
// again.
func DecideLease(claimedAt, lastActivity time.Time, lease time.Duration, disabled bool, now time.Time) (lapsed bool, next time.Time) {
	if disabled {
		return true, time.Time{}
	}
	from := claimedAt
	if lastActivity.After(from) {
		from = lastActivity
	}
	until := from.Add(lease)
	if !until.After(now) {
		return true, time.Time{}
	}
	return false, until
}

// CheckTaskLease returns EINVALID unless d is a valid project task lease
// (0 clears the project's own).
func CheckTaskLease(d time.Duration) error {
	if d != 0 && (d < MinTaskLease || d > MaxTaskLease) {
		return Errorf(EINVALID, "task lease %s is out of range: expected %s to %s (0 returns to the hub's --task-lease)", d, MinTaskLease, MaxTaskLease)
	}
	return nil
}

// checkHolder returns an error unless agentID holds t (claimed by it).
func checkHolder(t *Task, agentID int64, verb string) error {
	switch {
	case t.State != TaskClaimed:
		return Errorf(EPRECONDITION, "task %s is %s, not claimed: only its holder can %s a claimed task (claim_task first)", t, t.State, verb)
	case t.AssigneeID != agentID:
		return Errorf(EPERMISSION, "task %s is held by %s: only its holder can %s it", t, t.Assignee, verb)
	}
	return nil
}

// claimRefusal says why a task that is not ready cannot be claimed.
func claimRefusal(t *Task) error {
	switch {
	case t.State == TaskClaimed:
		return Errorf(EPRECONDITION, "task %s is already claimed by %s since %s: pick another (next_task finds one)", t, t.Assignee, t.ClaimedAt.UTC().Format(time.RFC3339))
	case t.State != TaskOpen:
		return Errorf(EPRECONDITION, "task %s is %s: only an open task can be claimed", t, t.State)
	default:
		return Errorf(EPRECONDITION, "task %s is not ready: %d of its dependencies (%s) are not done yet", t, t.Waiting, formatTaskIDs(t.DependsOn))
	}
}

func formatTaskIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}

// adminTransition checks that the admin may move t to state to. Errors:
// EPRECONDITION (a final state; claimed is reached by assigning).
func adminTransition(t *Task, to TaskState) error {
	switch {
	case t.State == to:
		return nil
	case t.State.Final():
		return Errorf(EPRECONDITION, "task %s is %s, which is final: create a new task instead", t, t.State)
	case to == TaskClaimed:
		return Errorf(EINVALID, "a task is claimed by assigning it: set assignee to an agent of its project")
	case to == TaskDone && t.Waiting > 0:
		return Errorf(EPRECONDITION, "task %s waits for %s: complete or drop those dependencies first", t, formatTaskIDs(t.DependsOn))
	}
	return nil
}

// claimedTaskNote returns the sentence a nudge ends with, naming the tasks
// held (the tasks its agent holds; "" when none).
func claimedTaskNote(held []*Task) string {
	if len(held) == 0 {
		return ""
	}
	s := " Your claimed task: "
	if len(held) > 1 {
		s = " Your claimed tasks: "
	}
	for i, t := range held {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s + " (checkpoint naming it, or complete_task / block_task)."
}
