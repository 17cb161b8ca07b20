package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// RespondToPulse implements hubv1.AgentServiceServer.
func (a *AgentServer) RespondToPulse(ctx context.Context, req *hubv1.RespondToPulseRequest) (*hubv1.RespondToPulseResponse, error) {
	r, err := a.s.svc.Schedule.RespondToPulse(ctx, Caller(ctx), req.GetText())
	if err != nil {
		return nil, err
	}
	return &hubv1.RespondToPulseResponse{Outcome: r.Outcome, Message: messageToProto(r.Message), Pending: r.Pending}, nil
}
