package mcpbridge_test

import (
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndTaskLoop runs the shared-work loop over the real binaries:
// two agents park in next_task through their own `hub mcp` processes; a
// third completes the task the ready one waits for, which wakes exactly
// one of them with it while the other stays parked, until a second task
// wakes that one too.
func TestEndToEndTaskLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hub binary")
	}
	t.Parallel()
	h := startHubProcess(t)
	ann, _ := h.mcpProcess(t, h.createAgent(t, "ann"))
	ben, _ := h.mcpProcess(t, h.createAgent(t, "ben"))
	cat, _ := h.mcpProcess(t, h.createAgent(t, "cat"))

	first, err := h.asAdmin.CreateTask(h.ctx(), &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "write the parser"}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.asAdmin.CreateTask(h.ctx(), &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "test the parser", DependsOn: []string{first.GetTask().GetId()}}})
	if err != nil {
		t.Fatal(err)
	}
	var claimed mcpbridge.TaskOutput
	mustCall(t, cat, "claim_task", map[string]any{"id": first.GetTask().GetId()}, &claimed)
	mustCall(t, cat, "checkpoint", map[string]any{"current_activity": "parsing", "task_id": first.GetTask().GetId()}, nil)

	type woken struct {
		who  string
		task *mcpbridge.Task
		at   time.Time
	}
	got := make(chan woken, 2)
	for name, cs := range map[string]*mcp.ClientSession{"ann": ann, "ben": ben} {
		go func() {
			var out mcpbridge.TaskOutput
			res := call(t, cs, "next_task", map[string]any{"wait_seconds": 30}, &out)
			if res.IsError {
				t.Errorf("%s next_task: %s", name, resultText(res))
			}
			got <- woken{name, out.Task, time.Now()}
		}()
	}
	eventuallyTrue(t, 10*time.Second, "both agents parked in next_task", func() bool { return h.parked(t) == 2 })
	select {
	case w := <-got:
		t.Fatalf("%s returned before any task was ready: %+v", w.who, w.task)
	case <-time.After(200 * time.Millisecond):
	}

	var done mcpbridge.TaskOutput
	completed := time.Now()
	mustCall(t, cat, "complete_task", map[string]any{"id": first.GetTask().GetId(), "note": "parser in"}, &done)
	if len(done.Ready) != 1 || done.Ready[0] != second.GetTask().GetId() {
		t.Errorf("complete_task made %v ready, want [%s]", done.Ready, second.GetTask().GetId())
	}
	w := <-got
	if w.task == nil || w.task.ID != second.GetTask().GetId() || w.task.Assignee != w.who {
		t.Fatalf("%s woke with %+v, want task %s claimed by it", w.who, w.task, second.GetTask().GetId())
	}
	t.Logf("%s woken with task %s %v after the completion", w.who, w.task.ID, w.at.Sub(completed))
	select {
	case other := <-got:
		t.Fatalf("%s woke too, with %+v: exactly one should", other.who, other.task)
	case <-time.After(300 * time.Millisecond):
	}
	if n := h.parked(t); n != 1 {
		t.Errorf("%d next_task calls parked after one was served, want the other one still parked", n)
	}
	third, err := h.asAdmin.CreateTask(h.ctx(), &hubv1.CreateTaskRequest{Task: &hubv1.TaskSpec{Title: "document the parser"}})
	if err != nil {
		t.Fatal(err)
	}
	other := <-got
	if other.who == w.who || other.task == nil || other.task.ID != third.GetTask().GetId() {
		t.Errorf("second wake-up: %s with %+v, want the other agent with task %s", other.who, other.task, third.GetTask().GetId())
	}
}
