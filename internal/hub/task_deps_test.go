package hub_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// chain imports n tasks, each after the one before, and returns their IDs.
func (h *testHub) chain(tb testing.TB, creator *hub.Agent, n int) []int64 {
	tb.Helper()
	items := make([]hub.ImportItem, n)
	for i := range items {
		items[i] = hub.ImportItem{Key: strconv.Itoa(i), Spec: hub.TaskSpec{Title: fmt.Sprintf("step %d", i)}}
		if i > 0 {
			items[i].After = []string{strconv.Itoa(i - 1)}
		}
	}
	ts, err := h.Tasks.Import(context.Background(), creator, "", items)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]int64, n)
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// A change of depends_on walks at most 1,000 tasks to rule out a cycle:
// past that it is refused, saying why, and changes nothing; within it,
// cycles are still found, the far end of the walk included.
func TestDependencyEditsAreBounded(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, _ := h.agent(t, "alice")
	ids := h.chain(t, alice, 1001)
	head, err := h.Tasks.Create(ctx, alice, "", hub.TaskSpec{Title: "head"})
	if err != nil {
		t.Fatal(err)
	}
	deps := hub.TaskPatch{Fields: []string{"depends_on"}, Spec: hub.TaskSpec{DependsOn: []int64{ids[1000]}}}
	_, _, err = h.Tasks.Update(ctx, alice, head.ID, deps)
	wantCode(t, "depends_on over a chain of 1,001", err, hub.EINVALID)
	if err != nil && !strings.Contains(err.Error(), "more than 1000 tasks") {
		t.Errorf("refusal = %q, want it to name the limit", err)
	}
	if got, err := h.Tasks.Get(ctx, "", head.ID); err != nil || len(got.DependsOn) != 0 {
		t.Errorf("after the refused edit: %+v, %v", got, err)
	}

	deps.Spec.DependsOn = []int64{ids[999]} // 1,000 tasks: within the bound
	if _, _, err := h.Tasks.Update(ctx, alice, head.ID, deps); err != nil {
		t.Fatalf("depends_on over a chain of 1,000: %v", err)
	}
	// The chain's first task cannot come after its last.
	loop := hub.TaskPatch{Fields: []string{"depends_on"}, Spec: hub.TaskSpec{DependsOn: []int64{head.ID}}}
	_, _, err = h.Tasks.Update(ctx, alice, ids[0], loop)
	wantCode(t, "a cycle through 1,001 tasks", err, hub.EINVALID)
	if err != nil && !strings.Contains(err.Error(), "cycle") {
		t.Errorf("refusal = %q, want a cycle", err)
	}
}

// An import's after keys count toward the 50 dependencies of a task, as
// its depends_on does.
func TestImportAfterKeysObeyTheDependencyLimit(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	items := make([]hub.ImportItem, 52)
	for i := range 51 {
		items[i] = hub.ImportItem{Key: strconv.Itoa(i), Spec: hub.TaskSpec{Title: fmt.Sprintf("part %d", i)}}
		items[51].After = append(items[51].After, strconv.Itoa(i))
	}
	items[51].Spec.Title = "all parts"
	_, err := h.Tasks.Import(ctx, nil, "", items)
	wantCode(t, "an import item after 51 others", err, hub.EINVALID)
	if err != nil && !strings.Contains(err.Error(), "the limit is 50") {
		t.Errorf("refusal = %q, want the limit named", err)
	}
	items[51].After = items[51].After[1:]
	if _, err := h.Tasks.Import(ctx, nil, "", items); err != nil {
		t.Errorf("an import item after 50 others: %v", err)
	}
}
