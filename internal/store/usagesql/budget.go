package usagesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.BudgetTx over the budgets table (migration
// 0023_budgets): an agent's budget has agent_id set and project '', a
// project's has agent_id NULL.

const budgetColumns = `COALESCE(b.agent_id, 0), COALESCE(a.name, ''), b.project, b.usd_per_day, b.tokens_per_day,
	b.warned_on, b.over_on, b.lifted_on, b.set_by, b.updated_at`

const budgetFrom = ` FROM budgets b LEFT JOIN agents a ON a.id = b.agent_id`

func scanBudget(s row.Scanner) (*hub.Budget, error) {
	var b hub.Budget
	var warned, over, lifted, updated int64
	if err := s.Scan(&b.AgentID, &b.Agent, &b.Project, &b.USDPerDay, &b.TokensPerDay, &warned, &over, &lifted, &b.SetBy, &updated); err != nil {
		return nil, fmt.Errorf("scan budget: %w", err)
	}
	b.WarnedOn, b.OverOn, b.LiftedOn, b.UpdatedAt = row.Time(warned), row.Time(over), row.Time(lifted), row.Time(updated)
	return &b, nil
}

// budgetWhere selects the budget of agentID, or of project when agentID
// is 0.
func budgetWhere(agentID int64, project string) (string, []any) {
	if agentID != 0 {
		return `agent_id = ?`, []any{agentID}
	}
	return `agent_id IS NULL AND project = ?`, []any{project}
}

// PutBudget implements hub.BudgetTx.
func (x Usage) PutBudget(b *hub.Budget) error {
	where, args := budgetWhere(b.AgentID, b.Project)
	vals := []any{b.USDPerDay, b.TokensPerDay, row.Nanos(b.WarnedOn), row.Nanos(b.OverOn), row.Nanos(b.LiftedOn), b.SetBy, row.Nanos(b.UpdatedAt)}
	n, err := x.DB.Exec(`UPDATE budgets SET usd_per_day = ?, tokens_per_day = ?, warned_on = ?, over_on = ?, lifted_on = ?, set_by = ?, updated_at = ?
		WHERE `+where, append(vals, args...)...)
	if err != nil || n > 0 {
		return err
	}
	var agent any
	project := b.Project
	if b.AgentID != 0 {
		agent, project = b.AgentID, ""
	}
	_, err = x.DB.Exec(`INSERT INTO budgets (agent_id, project, usd_per_day, tokens_per_day, warned_on, over_on, lifted_on, set_by, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{agent, project}, vals...)...)
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	return nil
}

// BudgetsOf implements hub.BudgetTx.
func (x Usage) BudgetsOf(agentID int64, project string) ([]*hub.Budget, error) {
	return x.budgets(`WHERE b.agent_id = ? OR (b.agent_id IS NULL AND b.project = ? AND b.project <> '')
		ORDER BY b.agent_id IS NULL`, agentID, project)
}

// Budgets implements hub.BudgetTx.
func (x Usage) Budgets() ([]*hub.Budget, error) {
	return x.budgets(`ORDER BY b.agent_id IS NOT NULL, b.project, a.name`)
}

func (x Usage) budgets(tail string, args ...any) ([]*hub.Budget, error) {
	rows, closeRows, err := x.DB.Query(`SELECT `+budgetColumns+budgetFrom+` `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("budgets: %w", err)
	}
	defer closeRows()
	var out []*hub.Budget
	for rows.Next() {
		b, err := scanBudget(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// DeleteBudget implements hub.BudgetTx.
func (x Usage) DeleteBudget(agentID int64, project string) (bool, error) {
	where, args := budgetWhere(agentID, project)
	n, err := x.DB.Exec(`DELETE FROM budgets WHERE `+where, args...)
	return n > 0, err
}

// DaySpend implements hub.BudgetTx.
func (x Usage) DaySpend(agentID int64, project string, day time.Time) (hub.UsageCounts, error) {
	var c hub.UsageCounts
	who, arg := `agent_id = ?`, any(agentID)
	if agentID == 0 {
		who, arg = `project = ?`, project
	}
	err := x.DB.QueryRow(`SELECT CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
		CAST(COALESCE(SUM(cache_read_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cache_creation_tokens), 0) AS BIGINT),
		CAST(COALESCE(SUM(requests), 0) AS BIGINT), COALESCE(SUM(cost_usd), 0)
	FROM usage_days WHERE at = ? AND `+who, day.UnixNano(), arg).Scan(&c.Input, &c.Output, &c.CacheRead, &c.CacheCreation, &c.Requests, &c.CostUSD)
	if err != nil {
		return c, fmt.Errorf("day spend: %w", err)
	}
	return c, nil
}

// BudgetHolds implements hub.BudgetTx.
func (x Usage) BudgetHolds(agentID int64, project string, day time.Time) (bool, error) {
	d := day.UnixNano()
	var one int
	err := x.DB.QueryRow(`SELECT 1 FROM budgets WHERE (agent_id = ? OR (agent_id IS NULL AND project = ?)) AND over_on = ? AND lifted_on <> ? LIMIT 1`,
		agentID, project, d, d).Scan(&one)
	if x.DB.IsNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

// BudgetAgents implements hub.BudgetTx: through the index of agents by
// project (agents_project), the default project's being those of none.
func (x Usage) BudgetAgents(project string) ([]*hub.Agent, error) {
	also := project
	if project == hub.DefaultProject {
		also = ""
	}
	rows, closeRows, err := x.DB.Query(`SELECT id, name, project FROM agents WHERE project IN (?, ?) AND disabled_at = 0 ORDER BY name`, project, also)
	if err != nil {
		return nil, fmt.Errorf("budget agents: %w", err)
	}
	defer closeRows()
	var out []*hub.Agent
	for rows.Next() {
		var a hub.Agent
		if err := rows.Scan(&a.ID, &a.Name, &a.Project); err != nil {
			return nil, fmt.Errorf("budget agents: %w", err)
		}
		out = append(out, &a)
	}
	return out, rows.Err()
}

// AnyBudgets implements hub.BudgetTx.
func (x Usage) AnyBudgets() (bool, error) {
	var one int
	err := x.DB.QueryRow(`SELECT 1 FROM budgets LIMIT 1`).Scan(&one)
	if x.DB.IsNoRows(err) {
		return false, nil
	}
	return err == nil, err
}
