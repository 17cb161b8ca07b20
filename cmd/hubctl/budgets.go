package main

import (
	"context"
	"fmt"
	"strconv"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// budgetsList lists the daily budgets and where each stands today:
// `hubctl budgets [list] [--agent NAME | --project P]`.
func budgetsList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("budgets list")
	agent := fs.String("agent", "", "only this agent's own budget")
	project := fs.String("project", "", "only this project's budget")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	r, err := c.admin.ListBudgets(ctx, &hubv1.ListBudgetsRequest{Agent: *agent, Project: *project})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetBudgets()) == 0 {
		fmt.Fprintln(c.out, "no budgets: hubctl budgets set --agent NAME --usd-per-day 10 sets one")
		return nil
	}
	rows := make([][]string, 0, len(r.GetBudgets()))
	for _, b := range r.GetBudgets() {
		who := "agent " + b.GetAgent()
		if b.GetAgent() == "" {
			who = "project " + b.GetProject()
		}
		rows = append(rows, []string{who, limitUSD(b.GetSpentUsd(), b.GetUsdPerDay()), limitTokens(b.GetSpentTokens(), b.GetTokensPerDay()), b.GetState(), dash(b.GetSetBy())})
	}
	c.table([]string{"BUDGET OF", "USD TODAY", "TOKENS TODAY", "STATE", "SET BY"}, rows)
	return nil
}

// limitUSD writes a day's spend against a limit in dollars ("-": none).
func limitUSD(spent, limit float64) string {
	if limit == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f / %.2f", spent, limit)
}

// limitTokens writes a day's tokens against a limit ("-": none).
func limitTokens(spent, limit int64) string {
	if limit == 0 {
		return "-"
	}
	return strconv.FormatInt(spent, 10) + " / " + strconv.FormatInt(limit, 10)
}

// budgetsSet sets a daily budget: `hubctl budgets set (--agent NAME |
// --project P) [--usd-per-day 10] [--tokens-per-day N]`.
func budgetsSet(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("budgets set")
	agent := fs.String("agent", "", "the agent whose own budget it is")
	project := fs.String("project", "", "the project whose budget it is (every agent of it together)")
	usd := fs.Float64("usd-per-day", 0, "dollars per UTC day, as the hosts report cost (0: no limit in dollars)")
	tokens := fs.Int64("tokens-per-day", 0, "tokens of every kind per UTC day (0: no limit in tokens)")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	r, err := c.admin.SetBudget(ctx, &hubv1.SetBudgetRequest{Agent: *agent, Project: *project, UsdPerDay: *usd, TokensPerDay: *tokens})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	b := r.GetBudget()
	who := "agent " + b.GetAgent()
	if b.GetAgent() == "" {
		who = "project " + b.GetProject()
	}
	fmt.Fprintf(c.out, "budget of %s set: usd %s, tokens %s today; %s\n", who, limitUSD(b.GetSpentUsd(), b.GetUsdPerDay()), limitTokens(b.GetSpentTokens(), b.GetTokensPerDay()), b.GetState())
	return nil
}

// budgetsRm deletes a daily budget: `hubctl budgets rm (--agent NAME |
// --project P)`.
func budgetsRm(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("budgets rm")
	agent := fs.String("agent", "", "the agent whose own budget it is")
	project := fs.String("project", "", "the project whose budget it is")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	if _, err := c.admin.DeleteBudget(ctx, &hubv1.DeleteBudgetRequest{Agent: *agent, Project: *project}); err != nil {
		return err
	}
	if *agent != "" {
		fmt.Fprintf(c.out, "budget of agent %s deleted\n", *agent)
	} else {
		fmt.Fprintf(c.out, "budget of project %s deleted\n", *project)
	}
	return nil
}
