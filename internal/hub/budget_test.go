package hub_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestBudgetStep(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	yesterday := day.Add(-24 * time.Hour)
	usd := func(c float64) hub.UsageCounts { return hub.UsageCounts{CostUSD: c} }
	tests := []struct {
		name  string
		b     hub.Budget
		spent hub.UsageCounts
		want  hub.BudgetStep
	}{
		{"under", hub.Budget{USDPerDay: 10}, usd(7.99), hub.BudgetQuiet},
		{"at 80 %", hub.Budget{USDPerDay: 10}, usd(8), hub.BudgetWarn},
		{"warned today", hub.Budget{USDPerDay: 10, WarnedOn: day}, usd(9), hub.BudgetQuiet},
		{"warned yesterday", hub.Budget{USDPerDay: 10, WarnedOn: yesterday}, usd(9), hub.BudgetWarn},
		{"reached", hub.Budget{USDPerDay: 10, WarnedOn: day}, usd(10), hub.BudgetOver},
		{"reached unwarned", hub.Budget{USDPerDay: 10}, usd(30), hub.BudgetOver},
		{"reached today already", hub.Budget{USDPerDay: 10, OverOn: day}, usd(30), hub.BudgetQuiet},
		{"reached yesterday", hub.Budget{USDPerDay: 10, OverOn: yesterday, WarnedOn: yesterday}, usd(30), hub.BudgetOver},
		{"lifted today", hub.Budget{USDPerDay: 10, LiftedOn: day}, usd(30), hub.BudgetQuiet},
		{"tokens count every kind", hub.Budget{TokensPerDay: 100}, hub.UsageCounts{Input: 25, Output: 25, CacheRead: 25, CacheCreation: 25}, hub.BudgetOver},
		{"the nearer limit", hub.Budget{USDPerDay: 100, TokensPerDay: 100}, hub.UsageCounts{Input: 85, CostUSD: 1}, hub.BudgetWarn},
		{"no cost limit", hub.Budget{TokensPerDay: 100}, usd(1e6), hub.BudgetQuiet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, b := hub.StepBudget(tt.b, tt.spent, day)
			if got != tt.want {
				t.Fatalf("step = %d, want %d", got, tt.want)
			}
			switch got {
			case hub.BudgetWarn:
				if !b.WarnedOn.Equal(day) || !b.OverOn.Equal(tt.b.OverOn) {
					t.Errorf("after the warning: %+v, want warned today", b)
				}
			case hub.BudgetOver:
				if !b.OverOn.Equal(day) || !b.WarnedOn.Equal(day) || !b.Holds(day) || b.Holds(day.Add(24*time.Hour)) {
					t.Errorf("after the limit: %+v, want reached and warned today, holding today only", b)
				}
			case hub.BudgetQuiet:
				if b != tt.b {
					t.Errorf("quiet step changed the budget: %+v", b)
				}
			}
		})
	}
}

func TestCheckBudgetLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		usd    float64
		tokens int64
		want   string // a part of the message; "" valid
	}{
		{10, 0, ""}, {0, 1000, ""}, {2.5, 1000, ""},
		{0, 0, "needs a limit"},
		{-1, 0, "usd_per_day -1"},
		{math.NaN(), 0, "not an amount"},
		{math.Inf(1), 0, "not an amount"},
		{2e6, 0, "not an amount"},
		{0, -5, "tokens_per_day -5 is negative"},
	} {
		err := hub.CheckBudgetLimits(tt.usd, tt.tokens)
		if tt.want == "" {
			if err != nil {
				t.Errorf("(%v, %d): %v", tt.usd, tt.tokens, err)
			}
			continue
		}
		if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), tt.want) {
			t.Errorf("(%v, %d) = %v, want EINVALID with %q", tt.usd, tt.tokens, err, tt.want)
		}
	}
}

// budgetHub is a hub with one ready task and agent ann, whose host
// reports usage through record.
func budgetHub(t *testing.T) (*testHub, *hub.Agent, func(cost float64)) {
	t.Helper()
	h := newTestHub(t)
	ann, _ := h.agent(t, "ann")
	record := func(cost float64) {
		t.Helper()
		if err := h.Usage.Record(context.Background(), ann, []hub.UsageDelta{{At: h.Clock.Now(), Model: "m", Counts: hub.UsageCounts{Input: 10, Requests: 1, CostUSD: cost}}}, ""); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	return h, ann, record
}

// nudges returns the texts of the hub's messages to a.
func nudges(t *testing.T, h *testHub, a *hub.Agent) []string {
	var out []string
	for _, m := range h.inbox(t, a) {
		if m.From == hub.SenderOrchestrator || m.SenderKind == hub.ByPerson || m.SenderKind == hub.ByAdmin {
			out = append(out, m.Body)
		}
	}
	return out
}

func TestBudgetWarnsStopsAndIsRaised(t *testing.T) {
	t.Parallel()
	h, ann, record := budgetHub(t)
	ctx := context.Background()
	if _, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "ann", USDPerDay: 1}); err != nil {
		t.Fatal(err)
	}
	record(0.5)
	if n := nudges(t, h, ann); len(n) != 0 {
		t.Fatalf("at 50 %%: %q, want nothing said", n)
	}
	record(0.35)
	record(0.05) // 90 %: warned once only
	n := nudges(t, h, ann)
	if len(n) != 1 || !strings.Contains(n[0], "85% spent") || !strings.Contains(n[0], "$0.85 of $1.00") {
		t.Fatalf("at 85 %% then 90 %%: %q, want one notice naming 85%% and the spend", n)
	}
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "work"}); err != nil {
		t.Fatal(err)
	}
	record(0.15)
	items, _, err := h.Inbox.ListItems(ctx, nil, "open", "", 10, "")
	if err != nil || len(items) != 1 || items[0].Kind != hub.KindBudget || items[0].AgentName != "ann" || !strings.Contains(items[0].Title, "agent ann") {
		t.Fatalf("inbox at the limit = %+v (%v), want one budget item naming ann", items, err)
	}
	n = nudges(t, h, ann)
	if len(n) != 2 || !strings.Contains(n[1], "Stop now") || !strings.Contains(n[1], "inbox item") {
		t.Fatalf("at the limit: %q, want the stop", n)
	}
	if r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{}); err != nil || r.Task != nil {
		t.Fatalf("next_task over budget = %+v, %v; want nothing", r, err)
	}
	record(0.5) // further reports open nothing more today
	if items, _, _ := h.Inbox.ListItems(ctx, nil, "open", "", 10, ""); len(items) != 1 {
		t.Errorf("open items after more spend = %d, want still 1", len(items))
	}
	st, err := h.Budgets.Get(ctx, nil, hub.BudgetRequest{Agent: "ann"})
	if err != nil || st.State() != hub.BudgetStateReached || math.Abs(st.Spent.CostUSD-1.55) > 1e-9 {
		t.Fatalf("Get = %+v (%v), want reached with $1.55 spent", st, err)
	}

	// A raise that leaves it reached is refused and changes nothing.
	id := items[0].ID
	_, err = h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, id, hub.Answer{Decision: hub.DecisionRaise, USDPerDay: 1.5})
	wantCode(t, "raise below the spend", err, hub.EINVALID)
	_, err = h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, id, hub.Answer{Decision: hub.DecisionRaise})
	wantCode(t, "raise without a limit", err, hub.EINVALID)
	_, err = h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, id, hub.Answer{Decision: hub.DecisionAllow})
	wantCode(t, "an approval's decision", err, hub.EINVALID)
	if r, _ := h.Tasks.Next(ctx, ann, hub.NextRequest{}); r.Task != nil {
		t.Fatal("a refused raise released the agent")
	}
	it, err := h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, id, hub.Answer{Decision: hub.DecisionRaise, USDPerDay: 3, Message: "go on"})
	if err != nil || it.State != hub.ItemAnswered || it.Decision != hub.DecisionRaise {
		t.Fatalf("raise = %+v, %v", it, err)
	}
	n = nudges(t, h, ann)
	if last := n[len(n)-1]; !strings.Contains(last, "pat raised the budget of agent ann to $3.00 a day") || !strings.Contains(last, "go on") {
		t.Errorf("told after the raise: %q", last)
	}
	if r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{}); err != nil || r.Task == nil {
		t.Fatalf("next_task after the raise = %+v, %v; want the task", r, err)
	}
}

func TestProjectBudgetLiftedAndNextDay(t *testing.T) {
	t.Parallel()
	h, ann, record := budgetHub(t)
	ctx := context.Background()
	bob, _ := h.agent(t, "bob")
	// Neither an agent of another project nor a disabled one is held.
	if _, err := h.CreateProject(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	cy, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "cy", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	dee, _ := h.agent(t, "dee")
	if _, err := h.SetAgentDisabled(ctx, "dee", true); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Project: hub.DefaultProject, TokensPerDay: 20}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "work"}); err != nil {
			t.Fatal(err)
		}
	}
	record(0) // 10 of 20 tokens
	if err := h.Usage.Record(ctx, bob, []hub.UsageDelta{{Model: "m", Counts: hub.UsageCounts{Output: 10, Requests: 1}}}, ""); err != nil {
		t.Fatal(err)
	}
	items, _, err := h.Inbox.ListItems(ctx, nil, "open", "", 10, "")
	if err != nil || len(items) != 1 || items[0].AgentName != "bob" || !strings.Contains(items[0].Title, "project default") {
		t.Fatalf("inbox = %+v (%v), want the project's budget item naming bob", items, err)
	}
	for _, a := range []*hub.Agent{ann, bob} {
		if r, err := h.Tasks.Next(ctx, a, hub.NextRequest{}); err != nil || r.Task != nil {
			t.Fatalf("next_task of %s over the project's budget = %+v, %v; want nothing", a.Name, r, err)
		}
		// Every agent the project's budget holds is told, not only bob.
		if n := nudges(t, h, a); len(n) == 0 || !strings.Contains(n[len(n)-1], "@"+a.Name+": the budget of project default is spent") {
			t.Errorf("told %s: %q, want the stop", a.Name, n)
		}
	}
	for _, a := range []*hub.Agent{cy, dee} {
		if n := nudges(t, h, a); len(n) != 0 {
			t.Errorf("told %s, not held by the budget: %q", a.Name, n)
		}
	}
	_, err = h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, items[0].ID, hub.Answer{Decision: hub.DecisionLift, TokensPerDay: 50})
	wantCode(t, "lift with a limit", err, hub.EINVALID)
	if _, err := h.Inbox.AnswerItem(ctx, &hub.Person{Name: "pat"}, items[0].ID, hub.Answer{Decision: hub.DecisionLift}); err != nil {
		t.Fatal(err)
	}
	if r, err := h.Tasks.Next(ctx, ann, hub.NextRequest{}); err != nil || r.Task == nil {
		t.Fatalf("next_task after the lift = %+v, %v; want a task", r, err)
	}
	record(0) // lifted: no new item today
	if items, _, _ := h.Inbox.ListItems(ctx, nil, "open", "", 10, ""); len(items) != 0 {
		t.Errorf("open items after a lift = %+v, want none", items)
	}

	// The next UTC day counts anew: reached again, then a new day releases.
	h.Clock.Advance(24 * time.Hour)
	record(0)
	record(0)
	if r, _ := h.Tasks.Next(ctx, bob, hub.NextRequest{}); r.Task != nil {
		t.Fatal("next_task on a new day past the budget handed a task")
	}
	h.Clock.Advance(24 * time.Hour)
	if r, err := h.Tasks.Next(ctx, bob, hub.NextRequest{}); err != nil || r.Task == nil {
		t.Fatalf("next_task on the day after = %+v, %v; want the task", r, err)
	}
	if err := h.Budgets.Delete(ctx, hub.BudgetRequest{Project: hub.DefaultProject}); err != nil {
		t.Fatal(err)
	}
	err = h.Budgets.Delete(ctx, hub.BudgetRequest{Project: hub.DefaultProject})
	wantCode(t, "delete again", err, hub.ENOTFOUND)
}

func TestBudgetSetRefusesBadInput(t *testing.T) {
	t.Parallel()
	h, ann, record := budgetHub(t)
	ctx := context.Background()
	for _, tt := range []struct {
		req  hub.BudgetRequest
		code string
	}{
		{hub.BudgetRequest{USDPerDay: 1}, hub.EINVALID},
		{hub.BudgetRequest{Agent: "ann", Project: hub.DefaultProject, USDPerDay: 1}, hub.EINVALID},
		{hub.BudgetRequest{Agent: "ann"}, hub.EINVALID},
		{hub.BudgetRequest{Agent: "ann", USDPerDay: -2}, hub.EINVALID},
		{hub.BudgetRequest{Agent: "nobody", USDPerDay: 1}, hub.ENOTFOUND},
		{hub.BudgetRequest{Project: "nowhere", USDPerDay: 1}, hub.ENOTFOUND},
	} {
		_, err := h.Budgets.Set(ctx, "pat", tt.req)
		wantCode(t, "Set", err, tt.code)
	}
	if bs, err := h.Budgets.List(ctx, nil); err != nil || len(bs) != 0 {
		t.Fatalf("budgets after bad input = %+v, %v; want none", bs, err)
	}
	// A budget set below today's spend holds at once, without waiting
	// for a report; a new limit above the spend releases the agent.
	record(2)
	st, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "ann", USDPerDay: 1})
	if err != nil || st.State() != hub.BudgetStateReached {
		t.Fatalf("set below the spend: %+v (%v), want reached at once", st, err)
	}
	if st, _ := h.Budgets.Get(ctx, nil, hub.BudgetRequest{Agent: "ann"}); st.State() != hub.BudgetStateReached {
		t.Fatalf("state = %s, want reached", st.State())
	}
	items, _, err := h.Inbox.ListItems(ctx, nil, "open", "", 10, "")
	if err != nil || len(items) != 1 || items[0].Kind != hub.KindBudget || items[0].AgentName != "ann" {
		t.Fatalf("inbox after a budget set below the spend = %+v (%v), want ann's budget item", items, err)
	}
	if n := nudges(t, h, ann); len(n) != 1 || !strings.Contains(n[0], "Stop now") {
		t.Fatalf("told ann: %q, want the stop", n)
	}
	st, err = h.Budgets.Set(ctx, "lee", hub.BudgetRequest{Agent: "ann", USDPerDay: 5})
	if err != nil || st.State() != hub.BudgetStateOK || st.SetBy != "lee" {
		t.Fatalf("raised: %+v (%v), want ok, set by lee", st, err)
	}
}

// TestProjectBudgetSetBelowTheSpend: a project's budget set below what its
// agents spent today holds every one of them at once; the item names the
// one that spent most.
func TestProjectBudgetSetBelowTheSpend(t *testing.T) {
	t.Parallel()
	h, ann, record := budgetHub(t)
	ctx := context.Background()
	bob, _ := h.agent(t, "bob")
	record(0.25)
	if err := h.Usage.Record(ctx, bob, []hub.UsageDelta{{Model: "m", Counts: hub.UsageCounts{Output: 10, Requests: 1, CostUSD: 2}}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tasks.Create(ctx, nil, "", hub.TaskSpec{Title: "work"}); err != nil {
		t.Fatal(err)
	}
	st, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Project: hub.DefaultProject, USDPerDay: 1})
	if err != nil || st.State() != hub.BudgetStateReached {
		t.Fatalf("set below the spend: %+v (%v), want reached at once", st, err)
	}
	items, _, err := h.Inbox.ListItems(ctx, nil, "open", "", 10, "")
	if err != nil || len(items) != 1 || items[0].AgentName != "bob" || !strings.Contains(items[0].Title, "project default") {
		t.Fatalf("inbox = %+v (%v), want the project's item naming bob, who spent most", items, err)
	}
	for _, a := range []*hub.Agent{ann, bob} {
		if n := nudges(t, h, a); len(n) != 1 || !strings.Contains(n[0], "Stop now") {
			t.Errorf("told %s: %q, want the stop", a.Name, n)
		}
		if r, err := h.Tasks.Next(ctx, a, hub.NextRequest{}); err != nil || r.Task != nil {
			t.Errorf("next_task of %s = %+v, %v; want nothing", a.Name, r, err)
		}
	}
}

// budgetReads is a store that counts the budget reads of its writes.
type budgetReads struct {
	hub.Store
	reads atomic.Int32
}

func (s *budgetReads) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(budgetReadsTx{tx, &s.reads}) })
}

type budgetReadsTx struct {
	hub.Tx
	reads *atomic.Int32
}

func (tx budgetReadsTx) BudgetsOf(agentID int64, project string) ([]*hub.Budget, error) {
	tx.reads.Add(1)
	return tx.Tx.BudgetsOf(agentID, project)
}

func (tx budgetReadsTx) AnyBudgets() (bool, error) {
	tx.reads.Add(1)
	return tx.Tx.AnyBudgets()
}

// While no budget exists, a report reads none (the hub knows it in
// memory); a budget set through the hub is held against the very next
// report, and one set through another process sharing the store within
// two seconds.
func TestNoBudgetsReadNothing(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	st := &budgetReads{Store: h.DB}
	svc := h.over(t, st)
	record := func(cost float64) {
		t.Helper()
		if err := svc.Usage.Record(ctx, ann, []hub.UsageDelta{{At: h.Clock.Now(), Model: "m", Counts: hub.UsageCounts{Input: 10, Requests: 1, CostUSD: cost}}}, ""); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	record(0.1)
	first := st.reads.Load()
	record(0.1)
	record(0.1)
	if n := st.reads.Load() - first; n != 0 {
		t.Errorf("with no budget at all, two reports read budgets %d times, want 0", n)
	}

	// Set through this hub: the next report is held against it ($0.40 of
	// $0.45 is over 80 %).
	if _, err := svc.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "ann", USDPerDay: 0.45}); err != nil {
		t.Fatal(err)
	}
	record(0.1)
	if n := nudges(t, h, ann); len(n) != 1 || !strings.Contains(n[0], "89% spent") {
		t.Fatalf("after a budget set with none before: %q, want the warning at 89%%", n)
	}

	// Set through another process (h.Budgets stands for it): seen once
	// what this one knew has run out.
	if err := h.Budgets.Delete(ctx, hub.BudgetRequest{Agent: "ann"}); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(3 * time.Second)
	record(0.1) // knows there is none again
	if _, err := h.Budgets.Set(ctx, "pat", hub.BudgetRequest{Agent: "ann", USDPerDay: 0.55}); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(3 * time.Second)
	record(0.1)
	if n := nudges(t, h, ann); len(n) != 2 || !strings.Contains(n[1], "Stop now") {
		t.Fatalf("after a budget set by another process: %q, want the stop at $0.55", n)
	}
}
