package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// tasksList shows a project's task board: `hubctl tasks [list]
// [--project P] [--state S] [--ready] [--label L]`.
func tasksList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("tasks list")
	project := fs.String("project", "", "only this project's tasks (default: every project)")
	state := fs.String("state", "", "only tasks in this state: open, claimed, blocked, done or cancelled")
	ready := fs.Bool("ready", false, "only ready tasks (open, every dependency done)")
	label := fs.String("label", "", "only tasks with this label")
	limit := fs.Int("limit", 200, "at most this many")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	r, err := c.asAdmin.ListTasks(ctx, &hubv1.ListTasksRequest{Project: *project, State: *state, Ready: *ready, Label: *label, Limit: int32(*limit)})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetTasks()) == 0 {
		fmt.Fprintln(c.out, "no tasks")
		return nil
	}
	rows := make([][]string, 0, len(r.GetTasks()))
	for _, t := range r.GetTasks() {
		rows = append(rows, []string{t.GetId(), t.GetProject(), taskState(t), priorityName(t.GetPriority()), truncate(t.GetTitle(), 60),
			dash(t.GetAssignee()), dash(strings.Join(t.GetDependsOn(), ",")), dash(strings.Join(t.GetLabels(), ","))})
	}
	c.table([]string{"ID", "PROJECT", "STATE", "PRIORITY", "TITLE", "ASSIGNEE", "AFTER", "LABELS"}, rows)
	if r.GetNextAfterId() != "" {
		fmt.Fprintf(c.out, "(more: raise --limit, or filter)\n")
	}
	return nil
}

// taskState is a task's state, "ready" for an open task that is.
func taskState(t *hubv1.Task) string {
	if t.GetReady() {
		return "ready"
	}
	return t.GetState()
}

// tasksAdd creates a task: `hubctl tasks add TITLE [--project P] ...`.
func tasksAdd(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("tasks add")
	project := fs.String("project", "", "the project's board (default: default)")
	desc := fs.String("description", "", "what is to be done, in detail")
	prio := fs.String("priority", "", "low, normal (default), high or urgent: next_task takes higher priorities first")
	role := fs.String("role", "", "only agents of this role take it with next_task")
	var labels, after, paths listFlag
	fs.Var(&labels, "label", "a label (repeatable, or comma-separated)")
	fs.Var(&after, "after", "the ID of a task that must be done first (repeatable)")
	fs.Var(&paths, "path", "a path or glob reserved for whoever claims it (repeatable)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give the task's title: hubctl tasks add \"write the parser\"")
	}
	p, err := parsePriority(*prio)
	if err != nil {
		return err
	}
	r, err := c.asAdmin.CreateTask(ctx, &hubv1.CreateTaskRequest{Project: *project, Task: &hubv1.TaskSpec{
		Title: strings.Join(pos, " "), Description: *desc, Priority: p, Labels: labels, Role: *role, DependsOn: after, Paths: paths}})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "task %s created in %s: %s (%s)\n", r.GetTask().GetId(), r.GetTask().GetProject(), r.GetTask().GetTitle(), taskState(r.GetTask()))
	return nil
}

// tasksShow prints one task with its dependents and latest checkpoints:
// `hubctl tasks show ID`.
func tasksShow(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("tasks show")
	id, err := c.oneName(fs, args, "task ID")
	if err != nil {
		return err
	}
	r, err := c.asAdmin.GetTask(ctx, &hubv1.GetTaskRequest{Id: id})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	t := r.GetTask()
	c.fields("id", t.GetId(), "project", t.GetProject(), "title", t.GetTitle(), "state", taskState(t), "priority", priorityName(t.GetPriority()),
		"labels", strings.Join(t.GetLabels(), ", "), "role", t.GetRole(), "creator", t.GetCreator(), "assignee", t.GetAssignee(),
		"depends on", strings.Join(t.GetDependsOn(), ", "), "dependents", strings.Join(t.GetDependents(), ", "),
		"paths", strings.Join(t.GetPaths(), ", "), "thread", t.GetThreadId(), "created", fmtTime(t.GetCreatedAt()),
		"claimed", fmtTime(t.GetClaimedAt()), "lease until", fmtTime(t.GetLeaseUntil()), "done", fmtTime(t.GetDoneAt()), "result", t.GetResult())
	if d := t.GetDescription(); d != "" {
		fmt.Fprintf(c.out, "\n%s\n", d)
	}
	if len(t.GetCheckpoints()) > 0 {
		fmt.Fprintln(c.out, "\nlatest checkpoints:")
		for _, cp := range t.GetCheckpoints() {
			fmt.Fprintf(c.out, "  %s  %s\n", fmtTime(cp.GetCreatedAt()), cp.GetCurrentActivity())
		}
	}
	return nil
}

// updateTask applies one admin edit to the task named by args and prints
// the outcome.
func (c *cli) updateTask(ctx context.Context, name string, args []string, flags func(fs *flag.FlagSet) func() (*hubv1.Task, []string, error)) error {
	fs := c.flags(name)
	apply := flags(fs)
	id, err := c.oneName(fs, args, "task ID")
	if err != nil {
		return err
	}
	t, paths, err := apply()
	if err != nil {
		return err
	}
	r, err := c.asAdmin.UpdateTask(ctx, &hubv1.UpdateTaskRequest{Id: id, Task: t, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	task := r.GetTask()
	who := ""
	if task.GetAssignee() != "" {
		who = " by " + task.GetAssignee()
	}
	fmt.Fprintf(c.out, "task %s: %s%s: %s\n", task.GetId(), taskState(task), who, task.GetTitle())
	return nil
}

// tasksClaim assigns a task to an agent (or returns it to open with
// --release): `hubctl tasks claim ID --agent NAME`.
func tasksClaim(ctx context.Context, c *cli, args []string) error {
	return c.updateTask(ctx, "tasks claim", args, func(fs *flag.FlagSet) func() (*hubv1.Task, []string, error) {
		agent := fs.String("agent", "", "the agent that takes it (an agent of the task's project)")
		release := fs.Bool("release", false, "take it off its holder: back to open")
		return func() (*hubv1.Task, []string, error) {
			if (*agent == "") == !*release {
				return nil, nil, usageErrorf("give --agent NAME to assign the task, or --release to return it to open")
			}
			return &hubv1.Task{Assignee: *agent}, []string{"assignee"}, nil
		}
	})
}

// tasksDone marks a task done: `hubctl tasks done ID [--note TEXT]`.
func tasksDone(ctx context.Context, c *cli, args []string) error {
	return c.updateTask(ctx, "tasks done", args, stateFlags("done", "note", "what was done (the task's result)"))
}

// tasksBlock marks a task blocked: `hubctl tasks block ID --reason TEXT`.
func tasksBlock(ctx context.Context, c *cli, args []string) error {
	return c.updateTask(ctx, "tasks block", args, stateFlags("blocked", "reason", "why it cannot go on"))
}

// tasksCancel cancels a task: `hubctl tasks cancel ID [--reason TEXT]`.
func tasksCancel(ctx context.Context, c *cli, args []string) error {
	return c.updateTask(ctx, "tasks cancel", args, stateFlags("cancelled", "reason", "why it is dropped"))
}

// stateFlags moves a task to state with a note flag called name.
func stateFlags(state, name, usage string) func(fs *flag.FlagSet) func() (*hubv1.Task, []string, error) {
	return func(fs *flag.FlagSet) func() (*hubv1.Task, []string, error) {
		note := fs.String(name, "", usage)
		return func() (*hubv1.Task, []string, error) {
			return &hubv1.Task{State: state, Result: *note}, []string{"state", "result"}, nil
		}
	}
}

// tasksLease sets a project's task lease: `hubctl tasks lease PROJECT
// DURATION` (0 returns to the hub's --task-lease).
func tasksLease(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("tasks lease")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErrorf("give a project and a duration: hubctl tasks lease default 45m (0 returns to the hub's --task-lease)")
	}
	d, err := time.ParseDuration(pos[1])
	if err != nil {
		return usageErrorf("%q is not a duration: expected such as 45m or 2h", pos[1])
	}
	r, err := c.admin.SetTaskLease(ctx, &hubv1.SetTaskLeaseRequest{Project: pos[0], LeaseSeconds: int64(d / time.Second)})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	fmt.Fprintf(c.out, "task lease of %s: %s\n", r.GetProject(), time.Duration(r.GetLeaseSeconds())*time.Second)
	return nil
}

// tasksImport reads tasks from a Markdown checklist or JSON and adds them
// in one transaction: `hubctl tasks import FILE [--project P]` ("-" reads
// standard input).
func tasksImport(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("tasks import")
	project := fs.String("project", "", "the project's board (default: default)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("give one file: a Markdown checklist (- [ ] title, indented items first) or JSON; - reads standard input")
	}
	var data []byte
	if pos[0] == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return err
	}
	items, skipped, err := parseTaskImport(data)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	r, err := c.admin.ImportTasks(ctx, &hubv1.ImportTasksRequest{Project: *project, Tasks: items})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	ready := 0
	for _, t := range r.GetTasks() {
		if t.GetReady() {
			ready++
		}
	}
	fmt.Fprintf(c.out, "imported %d tasks (%d ready)", len(r.GetTasks()), ready)
	if skipped > 0 {
		fmt.Fprintf(c.out, "; skipped %d checked items", skipped)
	}
	fmt.Fprintln(c.out)
	return nil
}
