package hub

import (
	"context"
	"time"
)

// PatternsOverlap reports whether some path is covered by both normalised
// patterns: the rule the service applies to compiled patterns
// (overlapTable), on two strings, for the tests and benchmarks of package
// hub_test.
func PatternsOverlap(a, b string) bool {
	var o overlapper
	return o.overlap(compileGlob(a), compileGlob(b))
}

// CoversProject reports whether the normalised patterns together cover
// every path of a project (coversProject), for the tests of package
// hub_test.
func CoversProject(patterns ...string) bool { return coversProject(patterns...) }

// CheckSuggestedRule is checkSuggestedRule, for the tests of package hub_test.
func CheckSuggestedRule(tool, rule string) string { return checkSuggestedRule(tool, rule) }

// StepBudget is budgetStep, for the tests of package hub_test.
func StepBudget(b Budget, spent UsageCounts, day time.Time) (BudgetStep, Budget) {
	return budgetStep(b, spent, day)
}

// Update runs fn in a write transaction of the core's store, which wakes
// the parked callers that fn's writes concern once it has committed
// (wake.go), for the tests of package hub_test.
func (c *Core) Update(ctx context.Context, fn func(tx Tx) error) error {
	return c.store.Update(ctx, fn)
}

// ParkOnItem parks a call of agentID on inbox item id (parkItem), for the
// tests of package hub_test: the channel receives its wake-ups, and the
// function ends it.
func (ws *Waiters) ParkOnItem(id, agentID int64) (<-chan struct{}, func(), error) {
	p, done, err := ws.parkItem(id, agentID)
	if err != nil {
		return nil, nil, err
	}
	return p.c, done, nil
}

// ParkTask keeps w as a next_task call of project that any task fits
// (parkTask), for the tests of package hub_test: w's channel receives its
// wake-ups, and the function ends it.
func (ws *Waiters) ParkTask(w *Waiter, project string) func() {
	return ws.parkTask(&taskWait{project: project, w: w})
}

// Look runs one look of the stream after its cursor (look), without
// moving the cursor or sending, for the benchmarks of package hub_test; it
// returns how many messages the look found.
func (st *Stream) Look() (int, error) {
	lk, err := st.look()
	return len(lk.msgs), err
}
