package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// GetUsage implements hubv1.AgentServiceServer: the caller's own usage.
func (a *AgentServer) GetUsage(ctx context.Context, req *hubv1.GetUsageRequest) (*hubv1.UsageReport, error) {
	groups, err := hub.ParseUsageGroups(req.GetGroupBy())
	if err != nil {
		return nil, err
	}
	return usageReport(a.s.svc.Usage.Report(ctx, nil, hub.UsageQuery{GroupBy: groups, Since: fromTS(req.GetSince()), Until: fromTS(req.GetUntil()), AgentID: Caller(ctx).ID}))
}

// ListUsage implements hubv1.AdminServiceServer: a person reads the
// usage of the projects the person sees.
func (a *AdminServer) ListUsage(ctx context.Context, req *hubv1.ListUsageRequest) (*hubv1.UsageReport, error) {
	groups, err := hub.ParseUsageGroups(req.GetGroupBy())
	if err != nil {
		return nil, err
	}
	return usageReport(a.s.svc.Usage.Report(ctx, personOf(ctx), hub.UsageQuery{GroupBy: groups, Since: fromTS(req.GetSince()), Until: fromTS(req.GetUntil()), Agent: req.GetAgent()}))
}

func usageReport(rows []hub.UsageRow, err error) (*hubv1.UsageReport, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.UsageRow, len(rows))
	for i, r := range rows {
		c := r.Counts
		out[i] = &hubv1.UsageRow{Agent: r.Agent, Project: r.Project, Task: r.TaskID, TaskTitle: r.TaskTitle, Model: r.Model, Day: ts(r.Day), Hour: ts(r.Hour),
			InputTokens: c.Input, OutputTokens: c.Output, CacheReadTokens: c.CacheRead, CacheCreationTokens: c.CacheCreation,
			Requests: c.Requests, CostUsd: c.CostUSD}
	}
	return &hubv1.UsageReport{Rows: out}, nil
}
