package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// PruneMessages implements hubv1.AdminServiceServer.
func (a *AdminServer) PruneMessages(ctx context.Context, req *hubv1.PruneMessagesRequest) (*hubv1.PruneMessagesResponse, error) {
	n, err := a.s.svc.Ops.PruneMessages(ctx, fromTS(req.GetBefore()))
	if err != nil {
		return nil, err
	}
	return &hubv1.PruneMessagesResponse{Deleted: n}, nil
}
