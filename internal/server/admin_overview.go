package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// ListAgentOverviews implements hubv1.AdminServiceServer.
// A person sees the agents of the projects the person sees.
func (a *AdminServer) ListAgentOverviews(ctx context.Context, req *hubv1.ListAgentOverviewsRequest) (*hubv1.ListAgentOverviewsResponse, error) {
	who := personOf(ctx)
	if req.GetProject() != "" {
		if err := hub.CheckSees(who, req.GetProject()); err != nil {
			return nil, err
		}
	}
	os, err := a.s.svc.Liveness.AgentOverviews(ctx, req.GetIncludeDisabled())
	if err != nil {
		return nil, err
	}
	project := func(o hub.AgentOverview) string { return o.Agent.Project }
	os = hub.SeenBy(hub.InProject(os, req.GetProject(), project), who, project)
	return &hubv1.ListAgentOverviewsResponse{Agents: a.s.OverviewsToProto(os)}, nil
}

// OverviewsToProto converts agents' overviews as ListAgentOverviews answers
// them; the dashboard's stream sends its changed rows in the same shape.
// The agent's health is the overview's own (agentView would read it again).
func (s *Server) OverviewsToProto(os []hub.AgentOverview) []*hubv1.AgentOverview {
	out := make([]*hubv1.AgentOverview, len(os))
	for i, o := range os {
		p := s.agentNow(o.Agent)
		p.Health = string(o.Health.Health.State)
		out[i] = &hubv1.AgentOverview{
			Agent:        p,
			Health:       agentHealthToProto(o.Health),
			UnreadCount:  o.Unread,
			MentionCount: o.Mentions,
			ParkedWaits:  int32(o.ParkedWaits),
		}
	}
	return out
}

// ListActivity implements hubv1.AdminServiceServer.
func (a *AdminServer) ListActivity(ctx context.Context, req *hubv1.ListActivityRequest) (*hubv1.ListActivityResponse, error) {
	logs, cps, err := a.s.svc.Liveness.ListActivity(ctx, req.GetName(), int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	resp := &hubv1.ListActivityResponse{
		ActivityLogs: make([]*hubv1.ActivityLog, len(logs)),
		Checkpoints:  make([]*hubv1.Checkpoint, len(cps)),
	}
	for i, l := range logs {
		resp.ActivityLogs[i] = activityLogToProto(l, req.GetName())
	}
	for i, c := range cps {
		resp.Checkpoints[i] = &hubv1.Checkpoint{
			Id: hub.FormatMessageID(c.ID), Agent: req.GetName(), CurrentActivity: c.CurrentActivity,
			HeartbeatId: c.HeartbeatID, CreatedAt: ts(c.CreatedAt),
		}
	}
	return resp, nil
}

// EndDeepWork implements hubv1.AdminServiceServer.
func (a *AdminServer) EndDeepWork(ctx context.Context, req *hubv1.EndDeepWorkRequest) (*hubv1.EndDeepWorkResponse, error) {
	d, err := a.s.svc.Liveness.EndDeepWork(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	p := DeepWorkToProto(d)
	p.Agent = req.GetName()
	return &hubv1.EndDeepWorkResponse{DeepWork: p}, nil
}

func channelsToProto(cs []hub.ChannelSummary) []*hubv1.Channel {
	out := make([]*hubv1.Channel, len(cs))
	for i, c := range cs {
		out[i] = &hubv1.Channel{Name: c.Name, MemberCount: c.MemberCount, Joined: c.Joined, Project: c.Project}
	}
	return out
}
