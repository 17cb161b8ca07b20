package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// ListAgentOverviews implements hubv1.AdminServiceServer.
func (a *AdminServer) ListAgentOverviews(ctx context.Context, req *hubv1.ListAgentOverviewsRequest) (*hubv1.ListAgentOverviewsResponse, error) {
	os, err := a.s.svc.Liveness.AgentOverviews(ctx, req.GetIncludeDisabled())
	if err != nil {
		return nil, err
	}
	os = hub.InProject(os, req.GetProject(), func(o hub.AgentOverview) string { return o.Agent.Project })
	out := make([]*hubv1.AgentOverview, len(os))
	for i, o := range os {
		out[i] = &hubv1.AgentOverview{
			Agent:        a.s.agentView(ctx, o.Agent),
			Health:       agentHealthToProto(o.Health),
			UnreadCount:  o.Unread,
			MentionCount: o.Mentions,
			ParkedWaits:  int32(o.ParkedWaits),
		}
	}
	return &hubv1.ListAgentOverviewsResponse{Agents: out}, nil
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

// ListChannels implements hubv1.AdminServiceServer.
func (a *AdminServer) ListChannels(ctx context.Context, req *hubv1.AdminListChannelsRequest) (*hubv1.AdminListChannelsResponse, error) {
	cs, err := a.s.svc.Messages.ListChannels(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &hubv1.AdminListChannelsResponse{Channels: channelsToProto(hub.InProject(cs, req.GetProject(), hub.ChannelProject))}, nil
}

func channelsToProto(cs []hub.ChannelSummary) []*hubv1.Channel {
	out := make([]*hubv1.Channel, len(cs))
	for i, c := range cs {
		out[i] = &hubv1.Channel{Name: c.Name, MemberCount: c.MemberCount, Joined: c.Joined, Project: c.Project}
	}
	return out
}
