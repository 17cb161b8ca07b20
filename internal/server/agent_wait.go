package server

import (
	"context"
	"slices"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
)

// agentServiceDesc is hubv1.AgentService_ServiceDesc with WaitForMessages
// served by waitForMessages instead of the generated handler.
func (s *Server) agentServiceDesc() *grpc.ServiceDesc {
	desc := hubv1.AgentService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName == "WaitForMessages" {
			desc.Methods[i].Handler = s.waitForMessages
		}
	}
	return &desc
}

// waitForMessages is the gRPC method handler of WaitForMessages, the call
// whose admission parks (its option in the protos). A parked call holds its
// goroutine's stack at the size it grew to, and both gRPC's reading of the
// request and the interceptors with the wait's reply above them grow it
// past 4 KiB. So the request is read and admitted (the gate's Admit, as
// the interceptor would) and the wait begun (hub.Waits.Begin: checked,
// its cursor placed, a first look) on a goroutine of their own, and the
// wait parks here, at the bottom of the call's stack; then the call goes
// through the interceptors as any other, which let it through by its
// admission, and the wait answers (Finish) under them.
func (s *Server) waitForMessages(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	start := s.svc.Core.Now()
	in := new(hubv1.WaitForMessagesRequest)
	var (
		decodeErr, err error
		caller         *hub.Agent
		wait           *hub.Wait
		release        = func() {}
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if decodeErr = dec(in); decodeErr != nil {
			return
		}
		var actx context.Context
		if actx, release, err = s.admitCall(ctx, in, hubv1.AgentService_WaitForMessages_FullMethodName); err != nil {
			release = func() {}
			return
		}
		caller = Caller(actx)
		wait, err = s.svc.Waits.Begin(actx, caller, waitRequest(in))
	}()
	<-done
	if decodeErr != nil {
		return nil, decodeErr
	}
	defer release()
	if wait != nil {
		defer wait.Close()
		wait.Park(ctx)
	}
	if caller != nil {
		ctx = WithCaller(ctx, caller)
	}
	ctx = withCallStart(ctx, start)
	handler := func(ctx context.Context, _ any) (any, error) {
		if err != nil {
			return nil, err // the refusal, or what Begin refused
		}
		r, err := wait.Finish(ctx)
		if err != nil {
			return nil, err
		}
		return waitResponse(r), nil
	}
	if interceptor == nil {
		return handler(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: hubv1.AgentService_WaitForMessages_FullMethodName}
	return interceptor(ctx, in, info, handler)
}

// waitResponse is the reply of a wait, alone or on a stream.
func waitResponse(r *hub.WaitResult) *hubv1.WaitForMessagesResponse {
	return &hubv1.WaitForMessagesResponse{
		Messages: messagesToProto(r.Messages),
		Cursor:   hub.FormatMessageID(r.Cursor),
		TimedOut: r.TimedOut,
		Status:   statusToProto(r.Status),
		WaitedMs: int32(r.Waited.Milliseconds()),
	}
}

type callStartKey struct{}

// withCallStart returns ctx carrying when its call began, before an early
// park, for the call's log line.
func withCallStart(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, callStartKey{}, t)
}

// callStart returns when the call began: before its early park, if it had
// one, else now on clock.
func callStart(ctx context.Context, clock hub.Clock) time.Time {
	if t, ok := ctx.Value(callStartKey{}).(time.Time); ok {
		return t
	}
	return clock.Now()
}
