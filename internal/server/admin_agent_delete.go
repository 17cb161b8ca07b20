package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// DeleteAgent implements hubv1.AdminServiceServer.
func (a *AdminServer) DeleteAgent(ctx context.Context, req *hubv1.DeleteAgentRequest) (*hubv1.DeleteAgentResponse, error) {
	d, err := a.s.svc.Agents.DeleteAgent(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return &hubv1.DeleteAgentResponse{Agent: agentToProto(d.Agent), MessagesDeleted: d.MessagesDeleted, RowsDeleted: d.RowsDeleted}, nil
}
