package storetest

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testBudgets: a budget per agent and one per project, each replaced in
// place; the day's spend sums the agent's or the project's day rows;
// a budget holds on the day it was reached unless lifted; deletion;
// whether any exists.
func testBudgets(t *testing.T, h NewDB) {
	db := fresh(t, h)
	a, b := createAgent(t, db, "alice"), createAgent(t, db, "bob")
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	anyBudgets := func() (some bool) {
		mustView(t, db, func(tx hub.Tx) (err error) {
			some, err = tx.AnyBudgets()
			return err
		})
		return some
	}
	if anyBudgets() {
		t.Fatal("AnyBudgets with none = true")
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, bu := range []*hub.Budget{
			{AgentID: a.ID, USDPerDay: 10, SetBy: "pat", UpdatedAt: t0},
			{Project: hub.DefaultProject, TokensPerDay: 1000, SetBy: "pat", UpdatedAt: t0},
			{AgentID: a.ID, USDPerDay: 12, TokensPerDay: 500, OverOn: day, WarnedOn: day, SetBy: "lee", UpdatedAt: t0}, // replaces alice's
		} {
			if err := tx.PutBudget(bu); err != nil {
				return err
			}
		}
		return nil
	})
	var list, ofA, ofB []*hub.Budget
	mustView(t, db, func(tx hub.Tx) (err error) {
		if list, err = tx.Budgets(); err != nil {
			return err
		}
		if ofA, err = tx.BudgetsOf(a.ID, hub.DefaultProject); err != nil {
			return err
		}
		ofB, err = tx.BudgetsOf(b.ID, hub.DefaultProject)
		return err
	})
	if !anyBudgets() {
		t.Error("AnyBudgets with two = false")
	}
	if len(list) != 2 || list[0].Project != hub.DefaultProject || list[0].AgentID != 0 || list[1].Agent != "alice" {
		t.Fatalf("budgets = %+v, want the project's, then alice's", list)
	}
	got := list[1]
	if got.USDPerDay != 12 || got.TokensPerDay != 500 || !got.OverOn.Equal(day) || !got.WarnedOn.Equal(day) || !got.LiftedOn.IsZero() || got.SetBy != "lee" || !got.UpdatedAt.Equal(t0) {
		t.Errorf("alice's budget = %+v, want the second one put", got)
	}
	if len(ofA) != 2 || ofA[0].AgentID != a.ID || ofA[1].Project != hub.DefaultProject {
		t.Errorf("budgets of alice = %+v, want hers then the project's", ofA)
	}
	if len(ofB) != 1 || ofB[0].AgentID != 0 {
		t.Errorf("budgets of bob = %+v, want the project's", ofB)
	}

	row := func(ag *hub.Agent, at time.Time, in int64, cost float64) hub.UsageRollup {
		return hub.UsageRollup{AgentID: ag.ID, Project: hub.DefaultProject, At: at, Model: "m", Counts: hub.UsageCounts{Input: in, Output: 1, Requests: 1, CostUSD: cost}}
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.AddUsage(nil, []hub.UsageRollup{row(a, day, 10, 1.5), row(b, day, 20, 2), row(a, day.Add(-24*time.Hour), 1000, 100)})
	})
	var spentA, spentP, none hub.UsageCounts
	var heldA, heldB, heldNext bool
	mustView(t, db, func(tx hub.Tx) (err error) {
		if spentA, err = tx.DaySpend(a.ID, "", day); err != nil {
			return err
		}
		if spentP, err = tx.DaySpend(0, hub.DefaultProject, day); err != nil {
			return err
		}
		if none, err = tx.DaySpend(0, "elsewhere", day); err != nil {
			return err
		}
		if heldA, err = tx.BudgetHolds(a.ID, hub.DefaultProject, day); err != nil {
			return err
		}
		if heldB, err = tx.BudgetHolds(b.ID, hub.DefaultProject, day); err != nil {
			return err
		}
		heldNext, err = tx.BudgetHolds(a.ID, hub.DefaultProject, day.Add(24*time.Hour))
		return err
	})
	if want := (hub.UsageCounts{Input: 10, Output: 1, Requests: 1, CostUSD: 1.5}); spentA != want {
		t.Errorf("alice's day = %+v, want %+v", spentA, want)
	}
	if want := (hub.UsageCounts{Input: 30, Output: 2, Requests: 2, CostUSD: 3.5}); spentP != want {
		t.Errorf("the project's day = %+v, want %+v", spentP, want)
	}
	if !none.IsZero() {
		t.Errorf("a project with no usage spent %+v", none)
	}
	if !heldA || heldB || heldNext {
		t.Errorf("holds: alice %v, bob %v, alice the next day %v; want true, false, false", heldA, heldB, heldNext)
	}

	// Lifted for the day: holds no more.
	got.LiftedOn = day
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutBudget(got) })
	mustView(t, db, func(tx hub.Tx) (err error) { heldA, err = tx.BudgetHolds(a.ID, hub.DefaultProject, day); return err })
	if heldA {
		t.Error("a lifted budget still holds")
	}

	var gone, again bool
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if gone, err = tx.DeleteBudget(0, hub.DefaultProject); err != nil {
			return err
		}
		again, err = tx.DeleteBudget(0, hub.DefaultProject)
		return err
	})
	mustView(t, db, func(tx hub.Tx) (err error) { list, err = tx.Budgets(); return err })
	if !gone || again || len(list) != 1 || list[0].AgentID != a.ID {
		t.Errorf("delete = %v then %v, left %+v; want true, false and alice's", gone, again, list)
	}
}
