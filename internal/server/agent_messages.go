package server

import (
	"context"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// Heartbeat implements hubv1.AgentServiceServer.
func (a *AgentServer) Heartbeat(ctx context.Context, _ *hubv1.HeartbeatRequest) (*hubv1.HeartbeatResponse, error) {
	r, err := a.s.svc.Liveness.Heartbeat(ctx, Caller(ctx))
	if err != nil {
		return nil, err
	}
	return &hubv1.HeartbeatResponse{
		HeartbeatId:      r.HeartbeatID,
		StartedAt:        ts(r.StartedAt),
		UnreadCount:      r.Unread,
		MentionCount:     r.Mentions,
		Beat:             r.Beat,
		SinceLast:        r.SinceLast,
		SinceLastReading: r.SinceLastReading,
	}, nil
}

// GetStatus implements hubv1.AgentServiceServer.
func (a *AgentServer) GetStatus(ctx context.Context, _ *hubv1.GetStatusRequest) (*hubv1.GetStatusResponse, error) {
	st, err := a.s.svc.Liveness.Status(ctx, Caller(ctx))
	if err != nil {
		return nil, err
	}
	return &hubv1.GetStatusResponse{Status: statusToProto(st)}, nil
}

// PostMessage implements hubv1.AgentServiceServer: an agent posts as
// itself in its own project; a person posts as the person, the admin as
// "admin", in the project they name.
func (a *AgentServer) PostMessage(ctx context.Context, req *hubv1.PostMessageRequest) (*hubv1.PostMessageResponse, error) {
	if err := adminField(ctx, "project", req.GetProject() != ""); err != nil {
		return nil, err
	}
	caller, sender := Caller(ctx), ""
	if caller == nil {
		sender = postSender(ctx)
	}
	m, err := a.s.svc.Messages.Post(ctx, caller, sender, hub.PostRequest{
		To: req.GetTo(), Channel: req.GetChannel(), Body: req.GetBody(), ReplyTo: req.GetReplyTo(), Mentions: req.GetMentions(),
		Priority: hub.Priority(req.GetPriority()), AckRequired: req.GetAckRequired(),
		Project: req.GetProject(), Person: personOf(ctx),
	})
	if err != nil {
		return nil, err
	}
	us, note := a.s.svc.Messages.Unreachable(caller, m)
	return &hubv1.PostMessageResponse{Message: messageToProto(m), Unreachable: unreachableNames(us), DeliveryNote: note}, nil
}

// ListMessages implements hubv1.AgentServiceServer: an agent's own
// messages, or, for the admin or a person, every message (of the agent,
// channel and project named).
func (a *AgentServer) ListMessages(ctx context.Context, req *hubv1.ListMessagesRequest) (*hubv1.ListMessagesResponse, error) {
	for _, f := range []struct {
		name  string
		given bool
	}{{"agent", req.GetAgent() != ""}, {"newest", req.GetNewest()}, {"project", req.GetProject() != ""}} {
		if err := adminField(ctx, f.name, f.given); err != nil {
			return nil, err
		}
	}
	var msgs []*hub.Message
	var cursor int64
	var more bool
	var err error
	if caller := Caller(ctx); caller != nil {
		msgs, cursor, more, err = a.s.svc.Messages.List(ctx, caller, hub.ListRequest{
			AfterID: req.GetAfterId(), UnreadOnly: req.GetUnreadOnly(), Limit: int(req.GetLimit()), Channel: req.GetChannel(),
		})
	} else if req.GetUnreadOnly() {
		err = hub.Errorf(hub.EINVALID, "unread_only is an agent's: only an agent has messages read or unread; leave it false to list every message")
	} else {
		msgs, cursor, more, err = a.s.svc.Messages.AdminList(ctx, hub.AdminListRequest{
			AfterID: req.GetAfterId(), Limit: int(req.GetLimit()), Agent: req.GetAgent(), Channel: req.GetChannel(), Newest: req.GetNewest(),
			Project: req.GetProject(), Person: personOf(ctx),
		})
	}
	if err != nil {
		return nil, err
	}
	return &hubv1.ListMessagesResponse{Messages: messagesToProto(msgs), Cursor: hub.FormatMessageID(cursor), HasMore: more}, nil
}

// MarkRead implements hubv1.AgentServiceServer.
func (a *AgentServer) MarkRead(ctx context.Context, req *hubv1.MarkReadRequest) (*hubv1.MarkReadResponse, error) {
	unread, cursor, err := a.s.svc.Messages.MarkRead(ctx, Caller(ctx), req.GetUpToId())
	if err != nil {
		return nil, err
	}
	return &hubv1.MarkReadResponse{UnreadCount: unread, ReadUpToId: hub.FormatMessageID(cursor)}, nil
}

// waitRequest is the hub's form of req.
func waitRequest(req *hubv1.WaitForMessagesRequest) hub.WaitRequest {
	return hub.WaitRequest{TimeoutSeconds: req.TimeoutSeconds, AfterID: req.GetAfterId(), Limit: int(req.GetLimit()), Via: req.GetVia()}
}

// JoinChannel implements hubv1.AgentServiceServer.
func (a *AgentServer) JoinChannel(ctx context.Context, req *hubv1.JoinChannelRequest) (*hubv1.JoinChannelResponse, error) {
	members, err := a.s.svc.Messages.JoinChannel(ctx, Caller(ctx), req.GetChannel())
	if err != nil {
		return nil, err
	}
	return &hubv1.JoinChannelResponse{Channel: req.GetChannel(), Members: members}, nil
}

// LeaveChannel implements hubv1.AgentServiceServer.
func (a *AgentServer) LeaveChannel(ctx context.Context, req *hubv1.LeaveChannelRequest) (*hubv1.LeaveChannelResponse, error) {
	if err := a.s.svc.Messages.LeaveChannel(ctx, Caller(ctx), req.GetChannel()); err != nil {
		return nil, err
	}
	return &hubv1.LeaveChannelResponse{Channel: req.GetChannel()}, nil
}
