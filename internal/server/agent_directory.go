package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// ListPeers implements hubv1.AgentServiceServer.
func (a *AgentServer) ListPeers(ctx context.Context, _ *hubv1.ListPeersRequest) (*hubv1.ListPeersResponse, error) {
	ps, err := a.s.svc.ListPeers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Peer, len(ps))
	for i, p := range ps {
		out[i] = &hubv1.Peer{
			Name: p.Name, DisplayName: p.DisplayName, Role: p.Role, Description: p.Description,
			Presence: string(p.Presence), LastSeenAt: ts(p.LastSeenAt),
		}
	}
	return &hubv1.ListPeersResponse{Peers: out}, nil
}

// ListChannels implements hubv1.AgentServiceServer.
func (a *AgentServer) ListChannels(ctx context.Context, _ *hubv1.ListChannelsRequest) (*hubv1.ListChannelsResponse, error) {
	cs, err := a.s.svc.ListChannels(ctx, Caller(ctx))
	if err != nil {
		return nil, err
	}
	return &hubv1.ListChannelsResponse{Channels: channelsToProto(cs)}, nil
}
