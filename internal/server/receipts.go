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

// GetMessageReceipts implements hubv1.AgentServiceServer: the receipts
// of a message the agent sent or received, of any message for the admin
// (no caller).
func (a *AgentServer) GetMessageReceipts(ctx context.Context, req *hubv1.GetMessageReceiptsRequest) (*hubv1.GetMessageReceiptsResponse, error) {
	m, rs, err := a.s.svc.Receipts.Get(ctx, Caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	return &hubv1.GetMessageReceiptsResponse{Message: messageToProto(m), Receipts: receiptsToProto(rs)}, nil
}

// ConfirmDelivery implements hubv1.AgentServiceServer.
func (a *AgentServer) ConfirmDelivery(ctx context.Context, req *hubv1.ConfirmDeliveryRequest) (*hubv1.ConfirmDeliveryResponse, error) {
	if err := a.s.svc.Receipts.Confirm(ctx, Caller(ctx), req.GetIds(), req.GetVia()); err != nil {
		return nil, err
	}
	return &hubv1.ConfirmDeliveryResponse{}, nil
}

// EndSession implements hubv1.AgentServiceServer.
func (a *AgentServer) EndSession(ctx context.Context, req *hubv1.EndSessionRequest) (*hubv1.EndSessionResponse, error) {
	if err := a.s.svc.Liveness.EndSession(ctx, Caller(ctx), req.GetVia()); err != nil {
		return nil, err
	}
	return &hubv1.EndSessionResponse{}, nil
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
			State:       string(r.State()),
			InContextAt: ts(r.InContextAt),
		}
		if r.Via != 0 {
			out[i].Via = r.Via.String()
		}
	}
	return out
}

// pathsToProto converts an agent's paths.
func pathsToProto(ps []hub.PathSeen) []*hubv1.DeliveryPath {
	out := make([]*hubv1.DeliveryPath, len(ps))
	for i, p := range ps {
		out[i] = &hubv1.DeliveryPath{Kind: p.Via.String(), LastSeenAt: ts(p.LastSeenAt), Live: p.Live}
	}
	return out
}

// unreachableNames are the names of the recipients a post says no live
// path reaches.
func unreachableNames(us []hub.Unreachable) []string {
	if len(us) == 0 {
		return nil
	}
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Name
	}
	return out
}
