package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// SetBudget implements hubv1.AdminServiceServer: the budget is set by the
// caller (the operator for the admin token).
func (a *AdminServer) SetBudget(ctx context.Context, req *hubv1.SetBudgetRequest) (*hubv1.SetBudgetResponse, error) {
	st, err := a.s.svc.Budgets.Set(ctx, personOf(ctx).Acting(), hub.BudgetRequest{Agent: req.GetAgent(), Project: req.GetProject(),
		USDPerDay: req.GetUsdPerDay(), TokensPerDay: req.GetTokensPerDay()})
	if err != nil {
		return nil, err
	}
	return &hubv1.SetBudgetResponse{Budget: budgetToProto(st)}, nil
}

// ListBudgets implements hubv1.AdminServiceServer: a person reads the
// budgets of the projects the person sees.
func (a *AdminServer) ListBudgets(ctx context.Context, req *hubv1.ListBudgetsRequest) (*hubv1.ListBudgetsResponse, error) {
	var sts []*hub.BudgetStanding
	if req.GetAgent() != "" || req.GetProject() != "" {
		st, err := a.s.svc.Budgets.Get(ctx, personOf(ctx), hub.BudgetRequest{Agent: req.GetAgent(), Project: req.GetProject()})
		if err != nil {
			return nil, err
		}
		sts = append(sts, st)
	} else {
		var err error
		if sts, err = a.s.svc.Budgets.List(ctx, personOf(ctx)); err != nil {
			return nil, err
		}
	}
	out := make([]*hubv1.DailyBudget, len(sts))
	for i, st := range sts {
		out[i] = budgetToProto(st)
	}
	return &hubv1.ListBudgetsResponse{Budgets: out}, nil
}

// DeleteBudget implements hubv1.AdminServiceServer.
func (a *AdminServer) DeleteBudget(ctx context.Context, req *hubv1.DeleteBudgetRequest) (*hubv1.DeleteBudgetResponse, error) {
	if err := a.s.svc.Budgets.Delete(ctx, hub.BudgetRequest{Agent: req.GetAgent(), Project: req.GetProject()}); err != nil {
		return nil, err
	}
	return &hubv1.DeleteBudgetResponse{}, nil
}

func budgetToProto(st *hub.BudgetStanding) *hubv1.DailyBudget {
	return &hubv1.DailyBudget{Agent: st.Agent, Project: st.Project, UsdPerDay: st.USDPerDay, TokensPerDay: st.TokensPerDay,
		SpentUsd: st.Spent.CostUSD, SpentTokens: st.Spent.Tokens(), State: st.State(), SetBy: st.SetBy,
		UpdatedAt: ts(st.UpdatedAt), Day: ts(st.Day)}
}
