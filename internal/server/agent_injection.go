package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// TakeInjection implements hubv1.AgentServiceServer.
func (a *AgentServer) TakeInjection(ctx context.Context, req *hubv1.TakeInjectionRequest) (*hubv1.TakeInjectionResponse, error) {
	inj, err := a.s.svc.Injections.TakeInjection(ctx, Caller(ctx), int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	return &hubv1.TakeInjectionResponse{
		Messages: messagesToProto(inj.Messages),
		More:     inj.More,
		Cursor:   hub.FormatMessageID(inj.Cursor),
	}, nil
}

// CheckStop implements hubv1.AgentServiceServer.
func (a *AgentServer) CheckStop(ctx context.Context, req *hubv1.CheckStopRequest) (*hubv1.CheckStopResponse, error) {
	c, err := a.s.svc.Injections.CheckStop(ctx, Caller(ctx), req.GetContinuing())
	if err != nil {
		return nil, err
	}
	return &hubv1.CheckStopResponse{
		Hold:       c.Hold,
		Messages:   messagesToProto(c.Messages),
		Count:      int32(c.Count),
		HeldInARow: int32(c.HeldInARow),
	}, nil
}
