package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// ListPeers implements hubv1.AgentServiceServer.
func (a *AgentServer) ListPeers(ctx context.Context, _ *hubv1.ListPeersRequest) (*hubv1.ListPeersResponse, error) {
	ps, err := a.s.svc.Messages.ListPeers(ctx, Caller(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Peer, len(ps))
	for i, p := range ps {
		out[i] = &hubv1.Peer{
			Name: p.Name, DisplayName: p.DisplayName, Role: p.Role, Description: p.Description,
			Presence: string(p.Presence), LastSeenAt: ts(p.LastSeenAt), Project: p.Project,
			Reachable: p.Reach.Reachable, Paths: pathsToProto(p.Reach.Paths),
		}
	}
	return &hubv1.ListPeersResponse{Peers: out}, nil
}

// ListChannels implements hubv1.AgentServiceServer.
func (a *AgentServer) ListChannels(ctx context.Context, req *hubv1.ListChannelsRequest) (*hubv1.ListChannelsResponse, error) {
	if err := adminField(ctx, "project", req.GetProject() != ""); err != nil {
		return nil, err
	}
	caller := Caller(ctx)
	cs, err := a.s.svc.Messages.ListChannels(ctx, caller)
	if err != nil {
		return nil, err
	}
	if caller == nil { // the admin or a person: every channel (of the person's projects), joined none
		who := personOf(ctx)
		if req.GetProject() != "" {
			if err := hub.CheckSees(who, req.GetProject()); err != nil {
				return nil, err
			}
		}
		cs = hub.SeenBy(hub.InProject(cs, req.GetProject(), hub.ChannelProject), who, hub.ChannelProject)
		return &hubv1.ListChannelsResponse{Channels: channelsToProto(cs)}, nil
	}
	out := channelsToProto(cs)
	for i, c := range cs {
		if c.Project != hub.ProjectOr(caller.Project) { // a linked project's: named as it is posted to
			out[i].Name = hub.ChannelRef{Project: c.Project, Name: c.Name}.String()
		}
	}
	return &hubv1.ListChannelsResponse{Channels: out}, nil
}
