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
// above them grow it past 4 KiB. So the request is read and admitted
// (UnaryInterceptor's checks, run here once: admittedEarly) and given its
// first look on a goroutine of its own, and a wait that must park parks
// here, at the bottom of the call's stack; then the call goes through the
// interceptors as any other, Wait going on with the same registration, or
// answering with the messages the first look found without reading them
// again.
func (s *Server) waitForMessages(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(hubv1.WaitForMessagesRequest)
	adm := &earlyAdmission{start: time.Now(), release: func() {}}
	var early *hub.EarlyWait
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err = dec(in); err != nil {
			return
		}
		early = s.parkEarly(ctx, in, adm)
	}()
	<-done
	if err != nil {
		return nil, err
	}
	defer adm.release()
	ctx = context.WithValue(ctx, admittedKey{}, adm)
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

// parkEarly admits the wait in (UnaryInterceptor's checks), recording the
// outcome in adm, and, if it is admitted, gives it its first look: it
// returns the wait registered to park early if it must park, holding what
// it found if it found messages (hub.Service.ParkEarly).
func (s *Server) parkEarly(ctx context.Context, in *hubv1.WaitForMessagesRequest, adm *earlyAdmission) *hub.EarlyWait {
	actx, release, err := s.admitCall(ctx, in, hubv1.AgentService_WaitForMessages_FullMethodName)
	adm.err = err
	if err != nil {
		return nil
	}
	adm.caller, adm.release = Caller(actx), release
	return s.svc.Waits.ParkEarly(actx, adm.caller, waitRequest(in))
}

type admittedKey struct{}

// earlyAdmission is the outcome of UnaryInterceptor's checks of a call
// that waitForMessages ran early, and when the call began.
type earlyAdmission struct {
	caller  *hub.Agent // nil: not authenticated
	err     error      // the refusal, if any
	release func()     // gives back what the admitted call holds
	start   time.Time
}

// apply returns ctx as the checks would have: carrying the caller, or the
// refusal; the caller is named in the call's log line either way.
func (a *earlyAdmission) apply(ctx context.Context) (context.Context, error) {
	if a.caller != nil {
		ctx = WithCaller(ctx, a.caller)
		noteAgent(ctx, a.caller)
	}
	return ctx, a.err
}

// admittedEarly returns the admission waitForMessages ran, nil if none.
func admittedEarly(ctx context.Context) *earlyAdmission {
	a, _ := ctx.Value(admittedKey{}).(*earlyAdmission)
	return a
}

// callStart returns when the call began: before its early park, if it had one.
func callStart(ctx context.Context) time.Time {
	if a := admittedEarly(ctx); a != nil {
		return a.start
	}
	return time.Now()
}
