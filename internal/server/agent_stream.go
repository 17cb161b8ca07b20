package server

import (
	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// Subscribe implements hubv1.AgentServiceServer: the stream of the
// caller's wake-ups (hub.Waits.Subscribe). Each frame is sent, then marked
// delivered; the stream interceptor admitted the call.
func (a *AgentServer) Subscribe(req *hubv1.SubscribeRequest, ss grpc.ServerStreamingServer[hubv1.SubscribeFrame]) error {
	ctx := ss.Context()
	if err := a.s.codec.check(req); err != nil {
		return err
	}
	st, err := a.s.svc.Waits.Subscribe(ctx, Caller(ctx), hub.SubscribeRequest{AfterID: req.GetAfterId(), Via: req.GetVia(), Limit: int(req.GetLimit())})
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		f, err := st.Next(ctx)
		if f == nil {
			return err
		}
		if err := ss.Send(&hubv1.SubscribeFrame{
			Messages: messagesToProto(f.Messages),
			Cursor:   hub.FormatMessageID(f.Cursor),
			Resync:   f.Resync,
			Status:   statusToProto(f.Status),
		}); err != nil {
			return err
		}
		if err := st.Sent(ctx, f); err != nil {
			return err
		}
	}
}
