package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// AcknowledgeMessage implements hubv1.AgentServiceServer.
func (a *AgentServer) AcknowledgeMessage(ctx context.Context, req *hubv1.AcknowledgeMessageRequest) (*hubv1.AcknowledgeMessageResponse, error) {
	acks, err := a.s.svc.Receipts.Acknowledge(ctx, Caller(ctx), req.GetIds())
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Acknowledgement, len(acks))
	for i, k := range acks {
		out[i] = &hubv1.Acknowledgement{MessageId: hub.FormatMessageID(k.MessageID), AckedAt: ts(k.AckedAt), First: k.First}
	}
	return &hubv1.AcknowledgeMessageResponse{Acks: out}, nil
}

// GetMessageReceipts implements hubv1.AgentServiceServer.
func (a *AgentServer) GetMessageReceipts(ctx context.Context, req *hubv1.GetMessageReceiptsRequest) (*hubv1.GetMessageReceiptsResponse, error) {
	m, rs, err := a.s.svc.Receipts.Get(ctx, Caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	return &hubv1.GetMessageReceiptsResponse{Message: messageToProto(m), Receipts: receiptsToProto(rs)}, nil
}

// GetMessageReceipts implements hubv1.AdminServiceServer.
func (a *AdminServer) GetMessageReceipts(ctx context.Context, req *hubv1.AdminGetMessageReceiptsRequest) (*hubv1.AdminGetMessageReceiptsResponse, error) {
	m, rs, err := a.s.svc.Receipts.Get(ctx, nil, req.GetId())
	if err != nil {
		return nil, err
	}
	return &hubv1.AdminGetMessageReceiptsResponse{Message: messageToProto(m), Receipts: receiptsToProto(rs)}, nil
}

func receiptsToProto(rs []hub.Receipt) []*hubv1.Receipt {
	out := make([]*hubv1.Receipt, len(rs))
	for i, r := range rs {
		out[i] = &hubv1.Receipt{
			Agent:       r.Agent,
			DeliveredAt: ts(r.DeliveredAt),
			Read:        r.Read,
			ReadAt:      ts(r.ReadAt),
			AckedAt:     ts(r.AckedAt),
			Mentioned:   r.Mention,
		}
	}
	return out
}
