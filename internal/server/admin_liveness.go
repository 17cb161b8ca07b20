package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// The admin liveness handlers: agent health, events and deep work.

// GetAgentHealth implements hubv1.AdminServiceServer.
func (a *AdminServer) GetAgentHealth(ctx context.Context, req *hubv1.GetAgentHealthRequest) (*hubv1.GetAgentHealthResponse, error) {
	h, err := a.s.svc.Liveness.AgentHealth(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.GetAgentHealthResponse{Health: agentHealthToProto(h)}, nil
}

// ListEvents implements hubv1.AdminServiceServer.
func (a *AdminServer) ListEvents(ctx context.Context, req *hubv1.ListEventsRequest) (*hubv1.ListEventsResponse, error) {
	evs, err := a.s.svc.Liveness.ListEvents(ctx, hub.ListEventsRequest{
		Agent: req.GetAgent(), Kind: req.GetKind(), Since: fromTS(req.GetSince()), AfterID: req.GetAfterId(), Limit: int(req.GetLimit()),
	})
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Event, len(evs))
	for i, e := range evs {
		out[i] = &hubv1.Event{
			Id:        hub.FormatMessageID(e.ID),
			Agent:     e.AgentName,
			Kind:      string(e.Kind),
			Detail:    e.Detail,
			CreatedAt: ts(e.CreatedAt),
		}
	}
	return &hubv1.ListEventsResponse{Events: out}, nil
}

// ListDeepWork implements hubv1.AdminServiceServer.
func (a *AdminServer) ListDeepWork(ctx context.Context, req *hubv1.ListDeepWorkRequest) (*hubv1.ListDeepWorkResponse, error) {
	ds, err := a.s.svc.Liveness.ListDeepWork(ctx, hub.ListDeepWorkRequest{Agent: req.GetAgent(), State: req.GetState(), Limit: int(req.GetLimit())})
	if err != nil {
		return nil, err
	}
	return &hubv1.ListDeepWorkResponse{DeepWork: deepWorksProto(ds)}, nil
}

func agentHealthToProto(h *hub.AgentHealth) *hubv1.AgentHealth {
	return &hubv1.AgentHealth{
		Agent:             h.Agent,
		State:             string(h.Health.State),
		Findings:          findingsToProto(h.Health.Findings),
		Presence:          string(h.Presence),
		LastActivityAt:    ts(h.LastActivityAt),
		LastActivityLogAt: ts(h.LastActivityLogAt),
		LastCheckpointAt:  ts(h.LastCheckpointAt),
		LastReflectionAt:  ts(h.LastReflectionAt),
		LastSeenAt:        ts(h.LastSeenAt),
		DeepWork:          deepWorkProto(h.DeepWork),
		ReflectionDue:     h.ReflectionDue,
		EvaluatedAt:       ts(h.EvaluatedAt),
	}
}
