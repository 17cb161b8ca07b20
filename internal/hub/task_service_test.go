package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestNextTaskParksUntilAFittingTaskIsReady parks next_task and checks
// that a task it does not fit leaves it parked, and one it fits wakes it
// at once with that task claimed.
func TestNextTaskParksUntilAFittingTaskIsReady(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	tasks := h.Tasks
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	got := make(chan *hub.NextResult, 1)
	go func() {
		r, err := tasks.Next(ctx, ann, hub.NextRequest{Labels: []string{"go"}, Wait: 20 * time.Second})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	waitFor(t, "ann's next_task parked", func() bool { return h.Waiters.AgentCount(ann.ID) > 0 })
	if _, err := tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "docs only", Labels: []string{"docs"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		t.Fatalf("a task without the label woke next_task: %+v", r.Task)
	case <-time.After(100 * time.Millisecond):
	}
	made := time.Now()
	fit, err := tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "go work", Labels: []string{"go", "api"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.Task == nil || r.Task.ID != fit.ID || r.Task.State != hub.TaskClaimed || r.Task.AssigneeID != ann.ID {
			t.Fatalf("woken with %+v, want task %d claimed by ann", r.Task, fit.ID)
		}
		t.Logf("woken %v after the task was made", time.Since(made))
	case <-time.After(5 * time.Second):
		t.Fatal("next_task still parked 5 s after a fitting task was made ready")
	}
	if n := h.Waiters.AgentCount(ann.ID); n != 0 {
		t.Errorf("%d waits of ann left registered", n)
	}
}

// TestTaskMessagesAndNudges checks whom the board tells: the creator of a
// blocked task, the holder taken off a task by the admin, the watchers of
// a task made ready; and that a nudge names the task its agent holds.
func TestTaskMessagesAndNudges(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	tasks := h.Tasks
	ctx := context.Background()
	lead, _ := h.agent(t, "lead")
	dev, _ := h.agent(t, "dev")
	other, _ := h.agent(t, "other")
	base, err := tasks.Create(ctx, lead, "", hub.TaskSpec{Title: "base"})
	if err != nil {
		t.Fatal(err)
	}
	top, err := tasks.Create(ctx, lead, "", hub.TaskSpec{Title: "top", DependsOn: []int64{base.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tasks.Claim(ctx, dev, base.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Block(ctx, dev, base.ID, "needs a schema"); err != nil {
		t.Fatal(err)
	}
	last := func(a *hub.Agent) string {
		ms := h.inbox(t, a)
		if len(ms) == 0 {
			return ""
		}
		return ms[len(ms)-1].Body
	}
	if b := last(lead); !strings.Contains(b, "blocked") || !strings.Contains(b, "needs a schema") {
		t.Errorf("lead was told %q, want the block and its reason", b)
	}
	// The creator unblocks it; the admin assigns it, then reassigns it.
	if _, _, err := tasks.Update(ctx, nil, base.ID, hub.TaskPatch{Fields: []string{"state"}, State: hub.TaskOpen}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tasks.Update(ctx, nil, base.ID, hub.TaskPatch{Fields: []string{"assignee"}, Assignee: "dev"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tasks.Update(ctx, nil, base.ID, hub.TaskPatch{Fields: []string{"assignee"}, Assignee: "other"}); err != nil {
		t.Fatal(err)
	}
	if b := last(dev); !strings.Contains(b, "reassigned to other") {
		t.Errorf("dev was told %q, want that the task went to other", b)
	}
	if _, _, err := tasks.Update(ctx, dev, top.ID, hub.TaskPatch{Fields: []string{"title"}, Spec: hub.TaskSpec{Title: "x"}}); hub.ErrorCode(err) != hub.EPERMISSION {
		t.Errorf("dev editing lead's task: %v, want PermissionDenied", err)
	}

	// A nudge to the holder names its task.
	h.Clock.Advance(time.Hour)
	set := hub.DefaultScheduleSettings()
	if _, _, err := h.CheckNudges(ctx, h.Clock.Now(), set); err != nil {
		t.Fatal(err)
	}
	if b := last(other); !strings.Contains(b, `#1 "base"`) {
		t.Errorf("other's nudge %q does not name its claimed task", b)
	}

	if _, _, err := tasks.Complete(ctx, other, base.ID, "schema in"); err != nil {
		t.Fatal(err)
	}
	if b := last(lead); !strings.Contains(b, `#2 "top" is ready`) {
		t.Errorf("lead (top's creator) was told %q, want that top is ready", b)
	}
}
