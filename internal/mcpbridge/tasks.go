package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// The task board's tools. Every tool description is paid for by every
// session (tools/list), so these say only what the guidelines do not: the
// loop itself (next_task, checkpoints naming the task, complete_task) is
// explained in guidelines://agent-collaboration. Creating and editing
// tasks is left to REST, hubctl and the dashboard: a create_task tool
// (360 characters) did not fit the budget beside the hub's other tools.

// Task is one task as the tools return it.
type Task struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	State       string   `json:"state"`
	Ready       bool     `json:"ready,omitempty"`
	Priority    string   `json:"priority,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	Role        string   `json:"role,omitempty"`
	Assignee    string   `json:"assignee,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
	Paths       []string `json:"paths,omitempty"`
	ThreadID    string   `json:"thread_id,omitempty"`
	Description string   `json:"description,omitempty"`
	Result      string   `json:"result,omitempty"`
	LeaseUntil  string   `json:"lease_until,omitempty"`
}

func fromTask(t *hubv1.Task) *Task {
	if t == nil {
		return nil
	}
	return &Task{ID: t.GetId(), Title: t.GetTitle(), State: t.GetState(), Ready: t.GetReady(), Priority: fromPriority(t.GetPriority()),
		Labels: t.GetLabels(), Role: t.GetRole(), Assignee: t.GetAssignee(), DependsOn: t.GetDependsOn(), Paths: t.GetPaths(),
		ThreadID: t.GetThreadId(), Description: t.GetDescription(), Result: t.GetResult(), LeaseUntil: formatTime(t.GetLeaseUntil())}
}

// line renders a task on one line: #12 [ready] title (labels) by holder.
func (t *Task) line() string {
	var sb strings.Builder
	state := t.State
	if t.Ready {
		state = "ready"
	}
	fmt.Fprintf(&sb, "#%s [%s] %s", t.ID, state, t.Title)
	if t.Priority != "" {
		sb.WriteString(" !" + t.Priority)
	}
	if len(t.Labels) > 0 {
		sb.WriteString(" (" + strings.Join(t.Labels, ", ") + ")")
	}
	if len(t.DependsOn) > 0 {
		sb.WriteString(" after #" + strings.Join(t.DependsOn, ", #"))
	}
	if t.Assignee != "" {
		sb.WriteString(" by " + t.Assignee)
	}
	return sb.String()
}

// detail renders a task claimed or changed: its line, description, paths
// and thread.
func (t *Task) detail() string {
	s := t.line()
	if t.Description != "" {
		s += "\n" + t.Description
	}
	if len(t.Paths) > 0 {
		s += "\nPaths reserved for you: " + strings.Join(t.Paths, ", ")
	}
	if t.ThreadID != "" {
		s += "\nDiscuss it: post_message reply_to " + t.ThreadID
	}
	return s
}

// TaskOutput is what the tools acting on one task return.
type TaskOutput struct {
	Task  *Task    `json:"task,omitempty"`
	Ready []string `json:"ready,omitempty"` // complete_task: the dependents it made ready
}

// TaskIDInput names one task.
type TaskIDInput struct {
	ID ID `json:"id"`
}

// ListTasksInput is the input of list_tasks.
type ListTasksInput struct {
	State string `json:"state,omitempty"`
	Label string `json:"label,omitempty"`
}

// ListTasksOutput is what list_tasks returns.
type ListTasksOutput struct {
	Tasks []*Task `json:"tasks"`
	More  bool    `json:"more,omitempty"`
}

func listTasksTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "list_tasks", Description: "The task board (state: ready, open, claimed, blocked, done)."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in ListTasksInput) (string, ListTasksOutput, error) {
		req := &hubv1.ListTasksRequest{State: in.State, Label: in.Label, Limit: 100}
		if in.State == "ready" {
			req.State, req.Ready = "", true
		}
		r, err := b.client.ListTasks(ctx, req)
		if err != nil {
			return "", ListTasksOutput{}, err
		}
		out := ListTasksOutput{More: r.GetNextAfterId() != ""}
		var sb strings.Builder
		for _, task := range r.GetTasks() {
			out.Tasks = append(out.Tasks, fromTask(task))
		}
		if len(out.Tasks) == 0 {
			return "No tasks.", out, nil
		}
		for _, task := range out.Tasks {
			sb.WriteString(task.line() + "\n")
		}
		if out.More {
			sb.WriteString("(first 100; filter by state or label)")
		}
		return strings.TrimSpace(sb.String()), out, nil
	})
}

func claimTaskTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "claim_task", Description: "Claim a ready task by id; its paths become yours."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in TaskIDInput) (string, TaskOutput, error) {
		r, err := b.client.ClaimTask(ctx, &hubv1.ClaimTaskRequest{Id: string(in.ID)})
		if err != nil {
			return "", TaskOutput{}, err
		}
		out := TaskOutput{Task: fromTask(r.GetTask())}
		return "Claimed " + out.Task.detail(), out, nil
	})
}

// NextTaskInput is the input of next_task. The role is the agent's own.
type NextTaskInput struct {
	Labels []string `json:"labels,omitempty"`
	Wait   *int     `json:"wait_seconds,omitempty"` // nil: defaultTaskWait; the hub checks the range
}

// defaultTaskWait is next_task's park when none is given: below the 60 s
// time-out of many MCP clients, as wait_for_messages' default is.
const defaultTaskWait = 45

func nextTaskTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "next_task", Description: "Claim the best ready task (with labels); waits up to 45 s for one."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in NextTaskInput) (string, TaskOutput, error) {
		wait := defaultTaskWait
		if in.Wait != nil {
			wait = *in.Wait
		}
		r, err := b.client.NextTask(ctx, &hubv1.NextTaskRequest{Labels: in.Labels, WaitSeconds: int32(wait)})
		if err != nil {
			return "", TaskOutput{}, err
		}
		out := TaskOutput{Task: fromTask(r.GetTask())}
		if out.Task == nil {
			return "No ready task fits. Call next_task again, or wait_for_messages.", out, nil
		}
		return "Claimed " + out.Task.detail(), out, nil
	})
}

// CompleteTaskInput is the input of complete_task.
type CompleteTaskInput struct {
	ID   ID     `json:"id"`
	Note string `json:"note,omitempty"`
}

func completeTaskTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "complete_task", Description: "Mark your claimed task done, with a note."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in CompleteTaskInput) (string, TaskOutput, error) {
		r, err := b.client.CompleteTask(ctx, &hubv1.CompleteTaskRequest{Id: string(in.ID), Note: in.Note})
		if err != nil {
			return "", TaskOutput{}, err
		}
		out := TaskOutput{Task: fromTask(r.GetTask()), Ready: r.GetReady()}
		msg := "Done: " + out.Task.line()
		if len(out.Ready) > 0 {
			msg += "\nNow ready: #" + strings.Join(out.Ready, ", #")
		}
		return msg, out, nil
	})
}

// BlockTaskInput is the input of block_task.
type BlockTaskInput struct {
	ID     ID     `json:"id"`
	Reason string `json:"reason"`
}

func blockTaskTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{Name: "block_task", Description: "Give up your task as blocked, saying why."}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in BlockTaskInput) (string, TaskOutput, error) {
		r, err := b.client.BlockTask(ctx, &hubv1.BlockTaskRequest{Id: string(in.ID), Reason: in.Reason})
		if err != nil {
			return "", TaskOutput{}, err
		}
		out := TaskOutput{Task: fromTask(r.GetTask())}
		return "Blocked: " + out.Task.line(), out, nil
	})
}
