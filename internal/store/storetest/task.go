package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// taskBoard is a task board over one handle of a database under test,
// with the hub's services it works with.
type taskBoard struct {
	db    hub.Store
	svc   *hub.Services
	tasks *hub.Tasks
	clock *hub.FakeClock
}

// newTaskBoards opens n handles on one fresh database, as n hub processes
// would, with a board on each sharing one fake clock.
func newTaskBoards(t *testing.T, h NewDB, n int) []taskBoard {
	t.Helper()
	open := h(t)
	clock := hub.NewFakeClock(t0)
	out := make([]taskBoard, n)
	for i := range out {
		db := open()
		cfg := hub.DefaultConfig()
		cfg.TaskLease = 30 * time.Minute
		svc := hub.NewServices(hub.NewCore(db, clock, cfg, hub.NewWaiters(cfg.WaitLimits, clock)))
		out[i] = taskBoard{db: db, svc: svc, clock: clock, tasks: svc.Tasks}
	}
	return out
}

// projectAgent creates an agent of project (created if need be).
func projectAgent(tb testing.TB, db hub.Store, name, project string) *hub.Agent {
	tb.Helper()
	a := &hub.Agent{Name: name, Project: project, CreatedAt: t0}
	mustUpdate(tb, db, func(tx hub.Tx) error {
		ok, err := tx.ProjectExists(project)
		if err == nil && !ok {
			err = tx.CreateProject(&hub.Project{Name: project, CreatedAt: t0})
		}
		if err != nil {
			return err
		}
		return tx.CreateAgent(a, hub.HashToken("token-"+name))
	})
	return a
}

func mustTask(tb testing.TB, b taskBoard, by *hub.Agent, spec hub.TaskSpec) *hub.Task {
	tb.Helper()
	task, err := b.tasks.Create(context.Background(), by, "", spec)
	if err != nil {
		tb.Fatalf("create %q: %v", spec.Title, err)
	}
	return task
}

func taskIDs(ts []*hub.Task) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// testTaskStore checks the task queries: a round trip, list filters,
// readiness kept by ReleaseDependents, the ready queue's order and fit,
// the lease queue, watchers, checkpoints and project leases.
func testTaskStore(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	alice := createAgent(t, db, "alice")
	bob := createAgent(t, db, "bob") // holds no task
	mk := func(title string, prio hub.Priority, labels []string, role string, deps []int64, at time.Duration) *hub.Task {
		task := &hub.Task{Project: hub.DefaultProject, Title: title, Description: "d " + title, State: hub.TaskOpen, Priority: prio,
			Labels: labels, Role: role, Creator: alice.Name, CreatorID: alice.ID, DependsOn: deps, Paths: []string{"src/" + title},
			Waiting: len(deps), CreatedAt: t0.Add(at), UpdatedAt: t0.Add(at)}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertTask(task) })
		return task
	}
	base := mk("base", hub.PriorityNormal, []string{"go"}, "", nil, 0)
	urgent := mk("urgent", hub.PriorityUrgent, []string{"docs"}, "", nil, time.Second)
	reviewer := mk("review", hub.PriorityHigh, []string{"go"}, "reviewer", nil, 2*time.Second)
	later := mk("later", hub.PriorityNormal, []string{"go", "api"}, "", nil, 3*time.Second)
	child := mk("child", hub.PriorityUrgent, nil, "", []int64{base.ID, later.ID}, 4*time.Second)

	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.TaskByID(child.ID)
		if err != nil {
			return err
		}
		if got.Title != "child" || got.Description != "d child" || got.State != hub.TaskOpen || got.Priority != hub.PriorityUrgent ||
			got.Creator != "alice" || got.CreatorID != alice.ID || got.Waiting != 2 || !slices.Equal(got.DependsOn, []int64{base.ID, later.ID}) ||
			!slices.Equal(got.Paths, []string{"src/child"}) || !got.CreatedAt.Equal(t0.Add(4*time.Second)) {
			t.Errorf("TaskByID(child) = %+v", got)
		}
		if _, err := tx.TaskByID(9999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("TaskByID(9999) = %v, want ENOTFOUND", err)
		}
		ready, err := tx.ReadyTasks(hub.DefaultProject, nil, "", 10)
		if err != nil {
			return err
		}
		if want := []int64{urgent.ID, base.ID, later.ID}; !slices.Equal(taskIDs(ready), want) {
			t.Errorf("ready for anyone = %v, want %v (urgent, then normal oldest first; not the reviewer's, not child)", taskIDs(ready), want)
		}
		ready, err = tx.ReadyTasks(hub.DefaultProject, []string{"go"}, "reviewer", 10)
		if err != nil {
			return err
		}
		if want := []int64{reviewer.ID, base.ID, later.ID}; !slices.Equal(taskIDs(ready), want) {
			t.Errorf("ready for a go reviewer = %v, want %v", taskIDs(ready), want)
		}
		ready, err = tx.ReadyTasks(hub.DefaultProject, []string{"go", "api"}, "", 1)
		if err != nil {
			return err
		}
		if want := []int64{later.ID}; !slices.Equal(taskIDs(ready), want) {
			t.Errorf("ready with go and api = %v, want %v", taskIDs(ready), want)
		}
		if ready, err = tx.ReadyTasks("other", nil, "", 10); err != nil || len(ready) != 0 {
			t.Errorf("ready in another project = %v, %v; want none", taskIDs(ready), err)
		}
		listed, err := tx.ListTasks(hub.TaskQuery{Label: "go", Limit: 10})
		if err != nil {
			return err
		}
		if want := []int64{base.ID, reviewer.ID, later.ID}; !slices.Equal(taskIDs(listed), want) {
			t.Errorf("listed with label go = %v, want %v", taskIDs(listed), want)
		}
		listed, err = tx.ListTasks(hub.TaskQuery{Project: hub.DefaultProject, Ready: true, AfterID: urgent.ID, Limit: 2})
		if err != nil {
			return err
		}
		if want := []int64{reviewer.ID, later.ID}; !slices.Equal(taskIDs(listed), want) {
			t.Errorf("ready after urgent, 2 = %v, want %v", taskIDs(listed), want)
		}
		deps, err := tx.TaskDependents(base.ID)
		if err != nil || !slices.Equal(deps, []int64{child.ID}) {
			t.Errorf("dependents of base = %v, %v", deps, err)
		}
		return nil
	})

	// Claims: the conditional write, and the lease queue.
	var won, again, notReady bool
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if won, err = tx.ClaimTask(base.ID, alice.ID, t0.Add(time.Minute), t0.Add(31*time.Minute)); err != nil {
			return err
		}
		if again, err = tx.ClaimTask(base.ID, alice.ID, t0.Add(time.Minute), t0.Add(31*time.Minute)); err != nil {
			return err
		}
		notReady, err = tx.ClaimTask(child.ID, alice.ID, t0.Add(time.Minute), t0.Add(31*time.Minute))
		return err
	})
	if !won || again || notReady {
		t.Errorf("claims: open %v, claimed again %v, not ready %v; want true, false, false", won, again, notReady)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if _, err := tx.ClaimTask(later.ID, alice.ID, t0.Add(2*time.Minute), t0.Add(10*time.Minute)); err != nil {
			return err
		}
		due, err := tx.DueTaskLeases(t0.Add(30*time.Minute), 10)
		if err != nil {
			return err
		}
		if !slices.Equal(taskIDs(due), []int64{later.ID}) {
			t.Errorf("due at +30m = %v, want later only", taskIDs(due))
		}
		if err := tx.SetTaskLeaseDue(later.ID, t0.Add(40*time.Minute)); err != nil {
			return err
		}
		if due, err = tx.DueTaskLeases(t0.Add(time.Hour), 1); err != nil {
			return err
		}
		if !slices.Equal(taskIDs(due), []int64{base.ID}) || due[0].Assignee != "alice" || due[0].State != hub.TaskClaimed {
			t.Errorf("first due at +1h = %+v, want base claimed by alice", due)
		}
		held, err := tx.TasksClaimedBy([]int64{alice.ID, bob.ID})
		if err != nil || len(held) != 1 || !slices.Equal(taskIDs(held[alice.ID]), []int64{base.ID, later.ID}) {
			t.Errorf("claimed by alice and bob = %v, %v; want alice's %d and %d, none of bob's", held, err, base.ID, later.ID)
		}
		return nil
	})

	// Done dependencies release their dependents, once each.
	for i, dep := range []*hub.Task{base, later} {
		mustUpdate(t, db, func(tx hub.Tx) error {
			cur, err := tx.TaskByID(dep.ID)
			if err != nil {
				return err
			}
			cur.State, cur.DoneAt, cur.LeaseDue = hub.TaskDone, t0.Add(time.Hour), time.Time{}
			if err := tx.UpdateTask(cur); err != nil {
				return err
			}
			ready, err := tx.ReleaseDependents(dep.ID, t0.Add(time.Hour))
			if err != nil {
				return err
			}
			want := []int64{}
			if i == 1 {
				want = []int64{child.ID}
			}
			if !slices.Equal(append([]int64{}, taskIDs(ready)...), want) {
				t.Errorf("made ready by %s = %v, want %v", dep.Title, taskIDs(ready), want)
			}
			return nil
		})
	}

	// Edits, watchers, checkpoints naming a task, leases per project.
	mustUpdate(t, db, func(tx hub.Tx) error {
		cur, err := tx.TaskByID(urgent.ID)
		if err != nil {
			return err
		}
		cur.Title, cur.Labels, cur.DependsOn, cur.Waiting, cur.Paths = "urgent!", []string{"a", "b"}, []int64{child.ID}, 1, nil
		if err := tx.UpdateTask(cur); err != nil {
			return err
		}
		if err := tx.UpdateTask(&hub.Task{ID: 9999, State: hub.TaskOpen}); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("UpdateTask(9999) = %v, want ENOTFOUND", err)
		}
		for range 2 {
			if err := tx.AddTaskWatcher(urgent.ID, alice.ID); err != nil {
				return err
			}
		}
		if err := tx.InsertCheckpoint(&hub.Checkpoint{AgentID: alice.ID, TaskID: urgent.ID, CurrentActivity: "one", HeartbeatID: "h", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.InsertCheckpoint(&hub.Checkpoint{AgentID: alice.ID, CurrentActivity: "other", HeartbeatID: "h", CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.InsertCheckpoint(&hub.Checkpoint{AgentID: alice.ID, TaskID: urgent.ID, CurrentActivity: "two", HeartbeatID: "h", CreatedAt: t0}); err != nil {
			return err
		}
		return tx.SetTaskLease(hub.DefaultProject, 45*time.Minute)
	})
	mustView(t, db, func(tx hub.Tx) error {
		cur, err := tx.TaskByID(urgent.ID)
		if err != nil {
			return err
		}
		if cur.Title != "urgent!" || !slices.Equal(cur.Labels, []string{"a", "b"}) || !slices.Equal(cur.DependsOn, []int64{child.ID}) || cur.Ready() || len(cur.Paths) != 0 {
			t.Errorf("edited task = %+v", cur)
		}
		ws, err := tx.TaskWatchers(urgent.ID)
		if err != nil || !slices.Equal(ws, []int64{alice.ID}) {
			t.Errorf("watchers = %v, %v; want alice once", ws, err)
		}
		cps, err := tx.TaskCheckpoints(urgent.ID, 5)
		if err != nil {
			return err
		}
		if len(cps) != 2 || cps[0].CurrentActivity != "two" || cps[1].CurrentActivity != "one" || cps[0].TaskID != urgent.ID {
			t.Errorf("checkpoints of urgent = %+v, want two then one", cps)
		}
		if d, err := tx.TaskLease(hub.DefaultProject); err != nil || d != 45*time.Minute {
			t.Errorf("lease of default = %v, %v; want 45m", d, err)
		}
		if d, err := tx.TaskLease("elsewhere"); err != nil || d != 0 {
			t.Errorf("lease of a project without one = %v, %v; want 0", d, err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.SetTaskLease(hub.DefaultProject, 0) })
	mustView(t, db, func(tx hub.Tx) error {
		if d, err := tx.TaskLease(hub.DefaultProject); err != nil || d != 0 {
			t.Errorf("lease after clearing = %v, %v; want 0", d, err)
		}
		return nil
	})
}

// testTaskClaimRace races 32 agents for one task through two handles on
// the same database, as two hub processes would: exactly one claims it,
// and each of the others is told who holds it.
func testTaskClaimRace(t *testing.T, h NewDB) {
	t.Parallel()
	boards := newTaskBoards(t, h, 2)
	const n = 32
	agents := make([]*hub.Agent, n)
	for i := range agents {
		agents[i] = createAgent(t, boards[0].db, fmt.Sprintf("claimer-%02d", i))
	}
	task := mustTask(t, boards[0], agents[0], hub.TaskSpec{Title: "the one task"})
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if i%4 == 0 { // a quarter ask next_task, the others claim by ID
				r, err := boards[i%2].tasks.Next(context.Background(), agents[i], hub.NextRequest{})
				if err == nil && r.Task == nil {
					err = hub.Errorf(hub.EPRECONDITION, "nothing ready")
				}
				errs[i] = err
				return
			}
			_, _, errs[i] = boards[i%2].tasks.Claim(context.Background(), agents[i], task.ID)
		}()
	}
	close(start)
	wg.Wait()
	var winners []int
	for i, err := range errs {
		switch {
		case err == nil:
			winners = append(winners, i)
		case hub.ErrorCode(err) != hub.EPRECONDITION:
			t.Errorf("claimer %d: %v, want a win or FailedPrecondition", i, err)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d winners (%v), want exactly 1", len(winners), winners)
	}
	got, err := boards[1].tasks.Get(context.Background(), "", task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != hub.TaskClaimed || got.AssigneeID != agents[winners[0]].ID {
		t.Errorf("task after the race = %s held by %d, want claimed by the winner %d", got.State, got.AssigneeID, agents[winners[0]].ID)
	}
	for i, err := range errs {
		if err != nil && i%4 != 0 && !strings.Contains(err.Error(), agents[winners[0]].Name) {
			t.Errorf("loser %d told %q, which does not name the holder %s", i, err, agents[winners[0]].Name)
		}
	}
}

// testTaskRules runs the board's rules on the store under test: cycles
// refused naming them, readiness through completion, a lapsed lease
// returned to open, paths reserved and released with the claim, and
// projects kept apart.
func testTaskRules(t *testing.T, h NewDB) {
	t.Parallel()
	b := newTaskBoards(t, h, 1)[0]
	ctx := context.Background()
	alice := createAgent(t, b.db, "alice")
	bob := createAgent(t, b.db, "bob")
	red := projectAgent(t, b.db, "rose", "red")

	// Cycles.
	one := mustTask(t, b, alice, hub.TaskSpec{Title: "one"})
	two := mustTask(t, b, alice, hub.TaskSpec{Title: "two", DependsOn: []int64{one.ID}})
	three := mustTask(t, b, alice, hub.TaskSpec{Title: "three", DependsOn: []int64{two.ID}, Paths: []string{"src/parser"}})
	_, _, err := b.tasks.Update(ctx, alice, one.ID, hub.TaskPatch{Fields: []string{"depends_on"}, Spec: hub.TaskSpec{DependsOn: []int64{three.ID}}})
	want := fmt.Sprintf("#%d → #%d → #%d → #%d", one.ID, three.ID, two.ID, one.ID)
	if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), want) {
		t.Errorf("closing a cycle: %v, want EINVALID naming %s", err, want)
	}
	if got, _ := b.tasks.Get(ctx, "", one.ID); len(got.DependsOn) != 0 || !got.Ready() {
		t.Errorf("after the refused edit one = %+v, want unchanged (no dependency, ready)", got)
	}

	// Readiness: two waits for one.
	if _, _, err := b.tasks.Claim(ctx, bob, two.ID); hub.ErrorCode(err) != hub.EPRECONDITION || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("claiming a task whose dependency is open: %v, want FailedPrecondition not ready", err)
	}
	if _, _, err := b.tasks.Claim(ctx, bob, one.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.tasks.Complete(ctx, alice, one.ID, "not mine"); hub.ErrorCode(err) != hub.EPERMISSION {
		t.Errorf("completing another's task: %v, want PermissionDenied", err)
	}
	_, ready, err := b.tasks.Complete(ctx, bob, one.ID, "parsed")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(taskIDs(ready), []int64{two.ID}) {
		t.Errorf("completing one made %v ready, want two", taskIDs(ready))
	}

	// Paths: three's are reserved with its claim, refused to another
	// holder's exclusive reservation, released when the claim lapses.
	if _, _, err := b.tasks.Claim(ctx, bob, two.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.tasks.Complete(ctx, bob, two.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Reservations.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"src/parser/lexer.go"}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.tasks.Claim(ctx, bob, three.ID)
	if hub.ErrorCode(err) != hub.EPRECONDITION || !strings.Contains(err.Error(), "alice") {
		t.Errorf("claiming a task whose paths alice holds: %v, want FailedPrecondition naming alice", err)
	}
	if got, _ := b.tasks.Get(ctx, "", three.ID); !got.Ready() {
		t.Errorf("after the refused claim three is %s held by %d, want open and ready", got.State, got.AssigneeID)
	}
	if _, err := b.svc.Reservations.ReleasePaths(ctx, alice, nil, nil); err != nil {
		t.Fatal(err)
	}
	claimedAt := b.clock.Now()
	if _, _, err := b.tasks.Claim(ctx, bob, three.ID); err != nil {
		t.Fatal(err)
	}
	held := func() []string {
		rs, err := b.svc.Reservations.ListReservations(ctx, hub.ReservationFilter{Agent: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		return reservationPatterns(rs)
	}
	if got := held(); !slices.Equal(got, []string{"bob:src/parser"}) {
		t.Errorf("bob's reservations with three claimed = %v, want src/parser", got)
	}

	// Lease: a checkpoint naming the task at +20m carries it past +30m;
	// silence until +50m returns it.
	b.clock.Set(claimedAt.Add(20 * time.Minute))
	if _, err := b.svc.Liveness.Checkpoint(ctx, bob, "lexing", three.ID); err != nil {
		t.Fatal(err)
	}
	if n, _, err := b.tasks.ExpireLeases(ctx, claimedAt.Add(31*time.Minute), 10); err != nil || n != 0 {
		t.Errorf("leases returned at +31m after a checkpoint at +20m: %d, %v; want 0", n, err)
	}
	if n, _, err := b.tasks.ExpireLeases(ctx, claimedAt.Add(49*time.Minute), 10); err != nil || n != 0 {
		t.Errorf("leases returned at +49m: %d, %v; want 0", n, err)
	}
	if n, _, err := b.tasks.ExpireLeases(ctx, claimedAt.Add(50*time.Minute), 10); err != nil || n != 1 {
		t.Errorf("leases returned at +50m: %d, %v; want 1", n, err)
	}
	got, err := b.tasks.Get(ctx, "", three.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Ready() || got.AssigneeID != 0 || len(got.Checkpoints) != 1 || got.Checkpoints[0].CurrentActivity != "lexing" {
		t.Errorf("three after its lease lapsed = %s held by %d with checkpoints %+v; want open, nobody, the lexing checkpoint", got.State, got.AssigneeID, got.Checkpoints)
	}
	if got := held(); len(got) != 0 {
		t.Errorf("bob's reservations after the lease lapsed = %v, want none", got)
	}

	// Projects: red's agent neither sees nor claims the default project's
	// tasks, and its own board is its own.
	if _, err := b.tasks.Get(ctx, "red", three.ID); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("red reading default's task: %v, want NotFound", err)
	}
	if _, _, err := b.tasks.Claim(ctx, red, three.ID); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("red claiming default's task: %v, want NotFound", err)
	}
	if r, err := b.tasks.Next(ctx, red, hub.NextRequest{}); err != nil || r.Task != nil {
		t.Errorf("red's next_task: %+v, %v; want nothing", r, err)
	}
	if _, err := b.tasks.Create(ctx, red, "", hub.TaskSpec{Title: "x", DependsOn: []int64{three.ID}}); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("red depending on default's task: %v, want NotFound", err)
	}
	mine := mustTask(t, b, red, hub.TaskSpec{Title: "red work"})
	listed, _, err := b.tasks.List(ctx, hub.TaskQuery{Project: "red"})
	if err != nil || !slices.Equal(taskIDs(listed), []int64{mine.ID}) {
		t.Errorf("red's board = %v, %v; want its one task", taskIDs(listed), err)
	}
}
