package server

import (
	"context"
	"errors"
	"io"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// Subscribe implements hubv1.AgentServiceServer: the stream of the
// caller's wake-ups (hub.Waits.Subscribe), opened by the first request.
// The call's goroutine reads each frame (parking between them), sends it,
// then marks it delivered, so a reader that does not read holds up the
// next read; the later requests confirm what reached the agent's context,
// read on the one other goroutine the stream holds (confirmations). The
// stream interceptor admitted the call.
func (a *AgentServer) Subscribe(ss grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame]) error {
	req, err := ss.Recv()
	if err != nil {
		return err
	}
	if err := a.s.codec.check(req); err != nil {
		return err
	}
	if len(req.GetConfirmIds()) > 0 {
		return hub.Errorf(hub.EINVALID, "confirm_ids is set in the first request, which opens the stream: confirm in later requests the messages of frames the stream sent")
	}
	ctx, cancel := context.WithCancelCause(ss.Context())
	defer cancel(nil)
	caller := Caller(ctx)
	st, err := a.s.svc.Waits.Subscribe(ctx, caller, hub.SubscribeRequest{AfterID: req.GetAfterId(), Via: req.GetVia(), Limit: int(req.GetLimit()), Watch: req.GetWatch()})
	if err != nil {
		return err
	}
	defer st.Close()
	go confirmations(ctx, ss, st, cancel)
	for {
		f, err := st.Next(ctx)
		if f == nil {
			if c := context.Cause(ctx); c != nil && !errors.Is(c, ctx.Err()) {
				return c // a confirmation refused
			}
			return err
		}
		st.Sending(f)
		if err := ss.Send(&hubv1.SubscribeFrame{
			Messages: messagesToProto(f.Messages),
			Cursor:   hub.FormatMessageID(f.Cursor),
			Status:   statusToProto(f.Status),
		}); err != nil {
			return err
		}
		if err := st.Sent(ctx, f); err != nil {
			return err
		}
	}
}

// confirmations reads the stream's later requests, each confirming
// messages its frames carried, until the stream ends or its reader closes
// its side; a refused one ends the stream with its error (end).
func confirmations(ctx context.Context, ss grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame], st *hub.Stream, end context.CancelCauseFunc) {
	for {
		req, err := ss.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				end(err)
			}
			return
		}
		if len(req.GetConfirmIds()) == 0 || req.GetAfterId() != "" || req.GetVia() != "" || req.GetLimit() != 0 || req.GetWatch() {
			end(hub.Errorf(hub.EINVALID, "a later request of the stream carries confirm_ids only, at least one (it sets after_id, via, limit or watch, or names no message): subscribe again to start elsewhere"))
			return
		}
		if err := st.Confirm(ctx, req.GetConfirmIds()); err != nil {
			end(err)
			return
		}
	}
}
