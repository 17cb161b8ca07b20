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

// waitForMessages is the gRPC method handler of WaitForMessages. A parked
// call holds its goroutine's stack at the size it grew to (hub.EarlyWait),
// and both gRPC's reading of the request and the interceptors with Wait
// above them grow it past 4 KiB. So the request is read, admitted (what
// UnaryInterceptor checks) and given its first look on a goroutine of its
// own, and a wait that must park parks here, at the bottom of the call's
// stack; then the call goes through the interceptors as any other, Wait
// going on with the same registration, and what UnaryInterceptor checked
// is not checked again (admittedEarly). A call that is not admitted, or
// would not park, goes through the interceptors as it came.
func (s *Server) waitForMessages(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	start := time.Now()
	in := new(hubv1.WaitForMessagesRequest)
	var caller *hub.Agent
	var early *hub.EarlyWait
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err = dec(in); err != nil {
			return
		}
		caller, early = s.parkEarly(ctx, in)
	}()
	<-done
	if err != nil {
		return nil, err
	}
	if caller != nil {
		ctx = context.WithValue(ctx, admittedKey{}, &admission{caller: caller, start: start})
	}
	if early != nil {
		defer early.Close()
		early.Park(ctx)
		ctx = hub.WithEarlyWait(ctx, early)
	}
	handler := func(ctx context.Context, req any) (any, error) {
		return srv.(hubv1.AgentServiceServer).WaitForMessages(ctx, req.(*hubv1.WaitForMessagesRequest))
	}
	if interceptor == nil {
		return handler(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: hubv1.AgentService_WaitForMessages_FullMethodName}
	return interceptor(ctx, in, info, handler)
}

// parkEarly admits the wait in as UnaryInterceptor would (valid UTF-8, an
// agent's working token, within its read rate) and returns its caller,
// nil if it is not admitted; for an admitted wait that must park, it also
// registers and returns it parked early.
func (s *Server) parkEarly(ctx context.Context, in *hubv1.WaitForMessagesRequest) (*hub.Agent, *hub.EarlyWait) {
	if s.codec.marked(in) {
		return nil, nil
	}
	a, err := s.svc.Authenticate(ctx, BearerToken(ctx))
	if err != nil {
		return nil, nil
	}
	ctx = WithCaller(ctx, a)
	if s.admit(ctx, hubv1.AgentService_WaitForMessages_FullMethodName) != nil {
		return nil, nil
	}
	return a, s.svc.ParkEarly(ctx, a, waitRequest(in))
}

type admittedKey struct{}

// admission is a call waitForMessages admitted: who calls, and since when.
type admission struct {
	caller *hub.Agent
	start  time.Time
}

// admittedEarly returns the caller waitForMessages admitted the call for,
// nil if it did not.
func admittedEarly(ctx context.Context) *hub.Agent {
	if a, ok := ctx.Value(admittedKey{}).(*admission); ok {
		return a.caller
	}
	return nil
}

// callStart returns when the call began: before its early park, if it had one.
func callStart(ctx context.Context) time.Time {
	if a, ok := ctx.Value(admittedKey{}).(*admission); ok {
		return a.start
	}
	return time.Now()
}
