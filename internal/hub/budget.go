package hub

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Budgets bound what agents spend in a UTC day, as their hosts report it
// (usage.go): one budget per agent, or per project (every agent of it
// together), in US dollars, in tokens, or both. At BudgetWarnAt of a limit
// the agent whose report reached it gets a notice; at the limit the people
// get an inbox item of kind budget naming that agent (answered by raising
// the budget or lifting it for the day), the agent is told to stop, and
// next_task hands the budget's agents nothing until the day ends or a
// person raises or lifts it. This file holds the rules, values in and
// decisions out; budget_service.go loads, decides and saves.

// Budget is a limit on what one agent (AgentID set) or every agent of one
// project (AgentID 0, Project set) spends in a UTC day. A limit of 0 does
// not bound; at least one is set.
type Budget struct {
	AgentID      int64
	Agent        string // the agent's name, filled when read back
	Project      string // a project's budget: the project
	USDPerDay    float64
	TokensPerDay int64 // every token the hosts report (UsageCounts.Tokens)
	// WarnedOn, OverOn and LiftedOn are the UTC days (their start; zero:
	// none) when the notice at BudgetWarnAt went, when the budget was
	// reached, when a person lifted it for the rest of the day.
	WarnedOn, OverOn, LiftedOn time.Time
	SetBy                      string
	UpdatedAt                  time.Time
}

// BudgetWarnAt is the share of a limit at which the agent is warned.
const BudgetWarnAt = 0.8

// maxBudgetUSD bounds a budget in dollars: a larger figure is a typo.
const maxBudgetUSD = 1e6

// Scope names whom the budget bounds: "agent NAME" or "project NAME".
func (b *Budget) Scope() string {
	if b.AgentID != 0 || b.Agent != "" {
		return "agent " + b.Agent
	}
	return "project " + b.Project
}

// Used is the largest share of a limit that spent takes (1: a limit
// reached).
func (b *Budget) Used(spent UsageCounts) float64 {
	var u float64
	if b.USDPerDay > 0 {
		u = spent.CostUSD / b.USDPerDay
	}
	if b.TokensPerDay > 0 {
		u = max(u, float64(spent.Tokens())/float64(b.TokensPerDay))
	}
	return u
}

// Holds reports whether the budget stops its agents' work on day: it was
// reached that day and not lifted.
func (b *Budget) Holds(day time.Time) bool {
	return b.OverOn.Equal(day) && !b.LiftedOn.Equal(day)
}

// BudgetDay is the UTC day at holds: the day budgets count over.
func BudgetDay(at time.Time) time.Time {
	at = at.UTC()
	return time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
}

// CheckBudgetLimits returns EINVALID unless usd and tokens are limits of a
// budget: neither negative, at least one set, usd a finite amount.
func CheckBudgetLimits(usd float64, tokens int64) error {
	switch {
	case math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 || usd > maxBudgetUSD:
		return Errorf(EINVALID, "usd_per_day %v is not an amount: give dollars per UTC day from 0 to %.0f (0: no limit in dollars)", usd, float64(maxBudgetUSD))
	case tokens < 0:
		return Errorf(EINVALID, "tokens_per_day %d is negative: give tokens per UTC day (0: no limit in tokens)", tokens)
	case usd == 0 && tokens == 0:
		return Errorf(EINVALID, "a budget needs a limit: give usd_per_day, tokens_per_day or both (to remove a budget, delete it)")
	}
	return nil
}

// BudgetStep is what a budget's spend calls for when usage is recorded.
type BudgetStep int

// The steps.
const (
	BudgetQuiet BudgetStep = iota // nothing to say
	BudgetWarn                    // the notice at BudgetWarnAt
	BudgetOver                    // the limit reached: inbox item, stop
)

// budgetStep decides what b's spend on day calls for, once per day each:
// the warning when a limit is BudgetWarnAt used, the stop when it is
// reached; nothing on a day the budget was lifted. It returns b as it
// stands after the step.
func budgetStep(b Budget, spent UsageCounts, day time.Time) (BudgetStep, Budget) {
	if b.LiftedOn.Equal(day) || b.OverOn.Equal(day) {
		return BudgetQuiet, b
	}
	used := b.Used(spent)
	switch {
	case used >= 1:
		b.OverOn, b.WarnedOn = day, day
		return BudgetOver, b
	case used >= BudgetWarnAt && !b.WarnedOn.Equal(day):
		b.WarnedOn = day
		return BudgetWarn, b
	}
	return BudgetQuiet, b
}

// restandBudget is b with new limits, standing as they make it on day
// against spent: a limit no longer reached releases the agents, one no
// longer near warns again when it nears.
func restandBudget(b Budget, usd float64, tokens int64, spent UsageCounts, day time.Time) Budget {
	b.USDPerDay, b.TokensPerDay = usd, tokens
	used := b.Used(spent)
	if used < 1 && b.OverOn.Equal(day) {
		b.OverOn = time.Time{}
	}
	if used < BudgetWarnAt && b.WarnedOn.Equal(day) {
		b.WarnedOn = time.Time{}
	}
	return b
}

// Limits says b's limits: "$10.00 and 2,000,000 tokens a day".
func (b *Budget) Limits() string {
	var l []string
	if b.USDPerDay > 0 {
		l = append(l, fmt.Sprintf("$%.2f", b.USDPerDay))
	}
	if b.TokensPerDay > 0 {
		l = append(l, groupDigits(b.TokensPerDay)+" tokens")
	}
	return strings.Join(l, " and ") + " a day"
}

// spentText says what spent counts against b's limits.
func spentText(b *Budget, spent UsageCounts) string {
	var l []string
	if b.USDPerDay > 0 {
		l = append(l, fmt.Sprintf("$%.2f of $%.2f", spent.CostUSD, b.USDPerDay))
	}
	if b.TokensPerDay > 0 {
		l = append(l, groupDigits(spent.Tokens())+" of "+groupDigits(b.TokensPerDay)+" tokens")
	}
	return strings.Join(l, " and ")
}

// groupDigits writes n with thousands separated by commas.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// budgetWarnText is the notice to agent at BudgetWarnAt of b.
func budgetWarnText(agent string, b *Budget, spent UsageCounts) string {
	return fmt.Sprintf("@%s: the budget of %s is %.0f%% spent today (%s, UTC day). Finish what you are on and keep the rest small: at the limit, the hub hands you no more tasks until a person raises it or the day ends.",
		agent, b.Scope(), 100*b.Used(spent), spentText(b, spent))
}

// budgetStopText is the message to agent when b is reached; item is the
// inbox item the people answer.
func budgetStopText(agent string, b *Budget, spent UsageCounts, item int64) string {
	return fmt.Sprintf("@%s: the budget of %s is spent for today (%s, UTC day). Stop now: save your state (a checkpoint), leave a note on your task, and make no more model calls. next_task hands you nothing until a person raises or lifts the budget (inbox item %d) or the UTC day ends.",
		agent, b.Scope(), spentText(b, spent), item)
}

// budgetItem is the inbox item of b reached, naming agent, whose report
// reached it.
func budgetItem(agent *Agent, b *Budget, spent UsageCounts, now time.Time) *InboxItem {
	return &InboxItem{Kind: KindBudget, AgentID: agent.ID, Project: ProjectOr(agent.Project), Urgency: UrgencyUrgent, State: ItemOpen, CreatedAt: now,
		CallKey: budgetKey(b),
		Title:   cutText(fmt.Sprintf("Budget of %s reached by %s: %s", b.Scope(), agent.Name, spentText(b, spent)), maxItemTitle),
		Body: fmt.Sprintf("The budget of %s (%s) is reached today (UTC): %s, the last report from agent %s. Its agents get no tasks until the UTC day ends. "+
			"Answer raise with higher usd_per_day or tokens_per_day to let them go on, or lift to leave the budget off for the rest of the day.",
			b.Scope(), b.Limits(), spentText(b, spent), agent.Name)}
}

// budgetKey is what a budget item holds of its budget (in CallKey):
// "agent" for the agent's own, "project" for its project's.
func budgetKey(b *Budget) string {
	if b.AgentID != 0 {
		return RememberAgent
	}
	return RememberProject
}

// Decisions on a budget item.
const (
	DecisionRaise = "raise" // new limits
	DecisionLift  = "lift"  // off for the rest of the UTC day
)

// checkBudgetAnswer returns EINVALID unless a answers budget item it:
// raise with new limits (at least one, each 0 or a limit) or lift
// without; the message said to the agent with it. It returns the
// decision and the message.
func checkBudgetAnswer(it *InboxItem, a Answer) (decision, text string, err error) {
	if a.Text != "" || a.Remember != "" || a.WholeTool {
		return "", "", Errorf(EINVALID, `inbox item %d is a budget: answer with "decision": "raise" (and usd_per_day or tokens_per_day) or "lift" (and an optional "message"), not with answer or remember`, it.ID)
	}
	switch a.Decision {
	case DecisionRaise:
		if a.USDPerDay == 0 && a.TokensPerDay == 0 {
			return "", "", Errorf(EINVALID, `inbox item %d: raise needs the new limit: give usd_per_day, tokens_per_day or both`, it.ID)
		}
		if err := CheckBudgetLimits(a.USDPerDay, a.TokensPerDay); err != nil {
			return "", "", err
		}
	case DecisionLift:
		if a.USDPerDay != 0 || a.TokensPerDay != 0 {
			return "", "", Errorf(EINVALID, `inbox item %d: lift leaves the budget off for the rest of the day and takes no limits; to set new ones, answer raise`, it.ID)
		}
	case "":
		return "", "", Errorf(EINVALID, `inbox item %d is a budget: give "decision": "raise" (with usd_per_day or tokens_per_day) or "lift"`, it.ID)
	default:
		return "", "", Errorf(EINVALID, `decision %q is not one for a budget: give "raise" or "lift"`, a.Decision)
	}
	return a.Decision, strings.TrimSpace(a.Message), nil
}
