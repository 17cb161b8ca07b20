package server

import (
	"context"
	"errors"
	"io"
	"sync"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// subscribeStream is the server side of a Subscribe call.
type subscribeStream = grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame]

// Subscribe implements hubv1.AgentServiceServer: the stream of the
// caller's wake-ups (hub.Waits.Subscribe), opened by the first request.
// Its frames are sent by the stream (hub.Stream.Serve), on a goroutine
// that runs only while a wake-up has something to look at or send; the
// call's goroutine reads the later requests, which confirm what reached
// the agent's context or carry calls (streamCalls). A stream that ends
// on its side (a revocation, the hub stopping, a send that failed) ends
// the call through its context (endableStream), which the call's reads
// hear. The stream interceptor admitted the call; each call it carries
// is admitted as that call.
func (a *AgentServer) Subscribe(ss subscribeStream) error {
	ctx := ss.Context()
	end, ok := ctx.Value(streamEndKey{}).(context.CancelCauseFunc)
	if !ok {
		return hub.Errorf(hub.EINTERNAL, "the stream's context cannot be ended: the server is not served with TapHandle")
	}
	defer end(nil)
	req, err := ss.Recv()
	if err != nil {
		return err
	}
	if err := a.s.codec.check(req); err != nil {
		return err
	}
	for _, f := range laterFields(req) {
		if f.set {
			return hub.Errorf(hub.EINVALID, "%s is set in the first request, which opens the stream: give it in a later request", f.name)
		}
	}
	caller := Caller(ctx)
	st, err := a.s.svc.Waits.Subscribe(ctx, caller, hub.SubscribeRequest{AfterID: req.GetAfterId(), Via: req.GetVia(), Limit: int(req.GetLimit()), Watch: req.GetWatch()})
	if err != nil {
		return err
	}
	// stop ends the stream with err: its status first, as the call
	// returning err would write it, so that a read or send its end
	// interrupts does not answer for it (gRPC writes the status of a
	// failed read or send at once).
	stop := func(err error) {
		if w, ok := grpc.ServerTransportStreamFromContext(ctx).(statusWriter); ok {
			_ = w.WriteStatus(status.Convert(admission.Status(err)))
		}
		end(err)
	}
	out := &frameSender{ss: ss}
	calls := &streamCalls{a: a, ctx: ctx, st: st, out: out, slots: make(chan struct{}, maxStreamCalls), open: map[uint64]context.CancelFunc{}}
	first := true
	st.Serve(func(f *hub.StreamFrame) error {
		frame := &hubv1.SubscribeFrame{
			Messages: messagesToProto(f.Messages),
			Cursor:   hub.FormatMessageID(f.Cursor),
			Status:   statusToProto(f.Status),
			Calls:    first,
		}
		if first {
			frame.MoreCalls = moreStreamCalls
		}
		first = false
		return out.send(frame)
	}, stop)
	err = requests(ctx, ss, st, calls)
	if err == nil {
		<-ctx.Done() // the reader closed its side: its frames still come
	} else {
		stop(err) // a send under way returns
	}
	calls.end(out)
	st.Close()
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return c // a request refused, or why the stream ended
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// statusWriter is gRPC's side of a call (its grpc.ServerTransportStream),
// which writes the call's status.
type statusWriter interface {
	WriteStatus(*status.Status) error
}

// streamEndKey is the context key of a Subscribe call's end: its cancel
// function, with which the call's side ends it (endableStream).
type streamEndKey struct{}

// endableStream returns the context of a Subscribe call, ctx, which its
// side can end (Subscribe): gRPC makes the call's reads from the context
// TapHandle returns, and nothing else ends a read waiting on a silent
// reader.
func endableStream(ctx context.Context) context.Context {
	ctx, end := context.WithCancelCause(ctx)
	return context.WithValue(ctx, streamEndKey{}, end)
}

// frameSender sends a stream's frames: those of the call's goroutine and
// the replies of the calls it carries, one at a time, none once the call
// ended (gRPC sends on a stream from one goroutine at a time, and not after
// its handler returned).
type frameSender struct {
	ss     subscribeStream
	mu     sync.Mutex
	closed bool
}

func (o *frameSender) send(f *hubv1.SubscribeFrame) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return io.EOF
	}
	return o.ss.Send(f)
}

// close stops the sending; it waits for a send under way.
func (o *frameSender) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// requests reads the stream's later requests until the stream ends or its
// reader closes its side (nil): each confirms messages its frames
// carried, carries a call or ends one. It returns the error of a refused
// one, which ends the stream: one the codec marked too (invalid UTF-8),
// as the first request is refused, whose mark goes with it.
func requests(ctx context.Context, ss subscribeStream, st *hub.Stream, calls *streamCalls) error {
	for {
		req, err := ss.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := calls.a.s.codec.check(req); err != nil {
			return err
		}
		given := 0
		for _, f := range laterFields(req) {
			if f.set {
				given++
			}
		}
		if given != 1 || req.GetAfterId() != "" || req.GetVia() != "" || req.GetLimit() != 0 || req.GetWatch() {
			return hub.Errorf(hub.EINVALID, "a later request of the stream carries one of confirm_ids, call or cancel_id, and nothing else (it sets after_id, via, limit or watch, none of them, or more than one): subscribe again to start elsewhere")
		}
		switch {
		case req.GetCall() != nil:
			err = calls.start(req.GetCall())
		case req.GetCancelId() != 0:
			calls.cancel(req.GetCancelId())
		default:
			err = st.Confirm(ctx, req.GetConfirmIds())
		}
		if err != nil {
			return err
		}
	}
}

// laterFields says which of the fields of a stream's later requests req
// sets: one of them in each later request, none in the first.
func laterFields(req *hubv1.SubscribeRequest) []struct {
	name string
	set  bool
} {
	return []struct {
		name string
		set  bool
	}{
		{"confirm_ids", len(req.GetConfirmIds()) > 0},
		{"call", req.GetCall() != nil},
		{"cancel_id", req.GetCancelId() != 0},
	}
}

// maxStreamCalls bounds the calls one stream runs at once: past it the
// stream reads no further request until one ends (gRPC's flow control
// then holds up its caller). A wait among them is also one of the agent's
// parked waits (--max-waiters-per-agent).
const maxStreamCalls = 8

// streamCalls runs the calls a stream carries, each on a goroutine of its
// own (a warm one of the hub's, hub.Stream.Carry, unless it parks),
// admitted as the call made alone (its method's rule: the caller's
// token and budget) and answered with its reply, or its error as the call
// alone would have ended, in a frame. They end with the stream.
type streamCalls struct {
	a     *AgentServer
	ctx   context.Context // the stream's
	st    *hub.Stream
	out   *frameSender
	slots chan struct{} // one per call running
	wg    sync.WaitGroup
	mu    sync.Mutex
	open  map[uint64]context.CancelFunc // by id, the calls running
	ended bool                          // the stream's call is returning: no call starts
}

// start runs call. Errors: EINVALID (no id, the id of a call still
// running, no call named), which end the stream.
func (c *streamCalls) start(call *hubv1.StreamCall) error {
	id := call.GetId()
	if id == 0 {
		return hub.Errorf(hub.EINVALID, "call.id is 0: give each call of the stream an id other than 0, which its reply carries")
	}
	if call.GetCall() == nil {
		return hub.Errorf(hub.EINVALID, "call %d names no call: set one of wait_for_messages, list_messages, mark_read, heartbeat, take_injection or confirm_delivery", id)
	}
	select {
	case c.slots <- struct{}{}:
	case <-c.ctx.Done():
		return nil
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	_, dup := c.open[id]
	ended := c.ended
	if !dup && !ended {
		c.open[id] = cancel
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if dup || ended {
		cancel()
		<-c.slots
		if ended {
			return nil
		}
		return hub.Errorf(hub.EINVALID, "call.id %d is the id of a call of the stream still running: give each running call its own id", id)
	}
	run := func() {
		defer c.wg.Done()
		reply := c.a.streamCall(ctx, call)
		c.mu.Lock()
		delete(c.open, id)
		c.mu.Unlock()
		cancel()
		<-c.slots
		// A reply the stream can no longer carry is lost with it: its
		// caller makes the call again.
		_ = c.out.send(&hubv1.SubscribeFrame{Reply: reply})
	}
	if parks(call) {
		go run() // it would hold a warm goroutine for as long as it waits
	} else {
		c.st.Carry(run)
	}
	return nil
}

// parks reports whether call may wait for something else to happen, for
// longer than the hub takes to answer it: a wait, or an approval a
// person decides.
func parks(call *hubv1.StreamCall) bool {
	return call.GetWaitForMessages() != nil || call.GetRequestApproval() != nil
}

// cancel ends the call id if it still runs (its reply is its error); an
// id of no running call is passed over: the call ended meanwhile.
func (c *streamCalls) cancel(id uint64) {
	c.mu.Lock()
	stop := c.open[id]
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// end ends the calls still running and waits for them, then stops out's
// sending: the stream's call is returning.
func (c *streamCalls) end(out *frameSender) {
	c.mu.Lock()
	c.ended = true
	for _, stop := range c.open {
		stop()
	}
	c.mu.Unlock()
	out.close()
	c.wg.Wait()
}

// moreStreamCalls are the calls a stream carries beyond its first four,
// by their StreamCall field names (SubscribeFrame.more_calls): a caller
// sends them only to a hub that lists them.
var moreStreamCalls = []string{"take_injection", "confirm_delivery", "note_host_event", "check_stop", "end_session", "request_approval"}

// streamCall runs one call a stream carries, as the call of its method
// made alone: through the interceptors of the calls alone (s.carry:
// logged, counted, admitted by the method's rule), answered by its
// handler.
func (a *AgentServer) streamCall(ctx context.Context, call *hubv1.StreamCall) *hubv1.StreamReply {
	reply := &hubv1.StreamReply{Id: call.GetId()}
	// One value per call is its transport stream, its server info and its
	// handler, which replies into reply: a carried call is the hub's most
	// frequent one, and each value allocated per call is garbage to collect.
	c := &carriedCall{reply: reply}
	c.info.Server = a
	var req any
	switch k := call.GetCall().(type) {
	case *hubv1.StreamCall_WaitForMessages:
		// Its admission parks: the interceptors let it through, and it is
		// admitted here, as its method handler admits the call alone.
		c.info.FullMethod, req = hubv1.AgentService_WaitForMessages_FullMethodName, k.WaitForMessages
		c.handle = func(ctx context.Context, _ any) (any, error) {
			err := a.admitted(ctx, k.WaitForMessages, hubv1.AgentService_WaitForMessages_FullMethodName, func(ctx context.Context) error {
				r, err := a.s.svc.Waits.Wait(ctx, Caller(ctx), waitRequest(k.WaitForMessages))
				if err == nil {
					reply.Reply = &hubv1.StreamReply_WaitForMessages{WaitForMessages: waitResponse(r)}
				}
				return err
			})
			return reply, err
		}
	case *hubv1.StreamCall_ListMessages:
		req = carriedUnary(a, c, hubv1.AgentService_ListMessages_FullMethodName, k.ListMessages, (*AgentServer).ListMessages,
			func(s *hubv1.StreamReply, r *hubv1.ListMessagesResponse) {
				s.Reply = &hubv1.StreamReply_ListMessages{ListMessages: r}
			})
	case *hubv1.StreamCall_MarkRead:
		req = carriedUnary(a, c, hubv1.AgentService_MarkRead_FullMethodName, k.MarkRead, (*AgentServer).MarkRead,
			func(s *hubv1.StreamReply, r *hubv1.MarkReadResponse) {
				s.Reply = &hubv1.StreamReply_MarkRead{MarkRead: r}
			})
	case *hubv1.StreamCall_Heartbeat:
		req = carriedUnary(a, c, hubv1.AgentService_Heartbeat_FullMethodName, k.Heartbeat, (*AgentServer).Heartbeat,
			func(s *hubv1.StreamReply, r *hubv1.HeartbeatResponse) {
				s.Reply = &hubv1.StreamReply_Heartbeat{Heartbeat: r}
			})
	case *hubv1.StreamCall_TakeInjection:
		req = carriedUnary(a, c, hubv1.AgentService_TakeInjection_FullMethodName, k.TakeInjection, (*AgentServer).TakeInjection,
			func(s *hubv1.StreamReply, r *hubv1.TakeInjectionResponse) {
				s.Reply = &hubv1.StreamReply_TakeInjection{TakeInjection: r}
			})
	case *hubv1.StreamCall_ConfirmDelivery:
		req = carriedUnary(a, c, hubv1.AgentService_ConfirmDelivery_FullMethodName, k.ConfirmDelivery, (*AgentServer).ConfirmDelivery,
			func(s *hubv1.StreamReply, r *hubv1.ConfirmDeliveryResponse) {
				s.Reply = &hubv1.StreamReply_ConfirmDelivery{ConfirmDelivery: r}
			})
	case *hubv1.StreamCall_NoteHostEvent:
		req = carriedUnary(a, c, hubv1.AgentService_NoteHostEvent_FullMethodName, k.NoteHostEvent, (*AgentServer).NoteHostEvent,
			func(s *hubv1.StreamReply, r *hubv1.NoteHostEventResponse) {
				s.Reply = &hubv1.StreamReply_NoteHostEvent{NoteHostEvent: r}
			})
	case *hubv1.StreamCall_CheckStop:
		req = carriedUnary(a, c, hubv1.AgentService_CheckStop_FullMethodName, k.CheckStop, (*AgentServer).CheckStop,
			func(s *hubv1.StreamReply, r *hubv1.CheckStopResponse) {
				s.Reply = &hubv1.StreamReply_CheckStop{CheckStop: r}
			})
	case *hubv1.StreamCall_EndSession:
		req = carriedUnary(a, c, hubv1.AgentService_EndSession_FullMethodName, k.EndSession, (*AgentServer).EndSession,
			func(s *hubv1.StreamReply, r *hubv1.EndSessionResponse) {
				s.Reply = &hubv1.StreamReply_EndSession{EndSession: r}
			})
	case *hubv1.StreamCall_RequestApproval:
		req = carriedUnary(a, c, hubv1.AgentService_RequestApproval_FullMethodName, k.RequestApproval, (*AgentServer).RequestApproval,
			func(s *hubv1.StreamReply, r *hubv1.RequestApprovalResponse) {
				s.Reply = &hubv1.StreamReply_RequestApproval{RequestApproval: r}
			})
	}
	ctx = grpc.NewContextWithServerTransportStream(ctx, c)
	if _, err := a.s.carry(ctx, req, &c.info, c.handle); err != nil {
		st := status.Convert(admission.Status(err))
		reply.Reply = &hubv1.StreamReply_Error{Error: &hubv1.StreamError{Code: int32(st.Code()), Message: st.Message()}}
	}
	return reply
}

// carriedUnary makes c the call of method, answered by a's handler of the
// method alone (call), whose reply set puts into the stream's reply,
// error or not; it returns the request, req. call (a method expression)
// and set capture nothing, so that they cost no allocation.
func carriedUnary[Req, Resp any](a *AgentServer, c *carriedCall, method string, req Req, call func(*AgentServer, context.Context, Req) (Resp, error), set func(*hubv1.StreamReply, Resp)) any {
	c.info.FullMethod = method
	c.handle = func(ctx context.Context, _ any) (any, error) {
		r, err := call(a, ctx, req)
		set(c.reply, r)
		return r, err
	}
	return req
}

// carriedCall is one call a stream carries: its grpc.ServerTransportStream
// (its method: the headers and trailers its interceptors set go nowhere,
// the stream's own were sent with its first frame), the info its
// interceptors see, and its handler, which answers into reply.
type carriedCall struct {
	info   grpc.UnaryServerInfo
	handle grpc.UnaryHandler
	reply  *hubv1.StreamReply
}

func (c *carriedCall) Method() string             { return c.info.FullMethod }
func (*carriedCall) SetHeader(metadata.MD) error  { return nil }
func (*carriedCall) SendHeader(metadata.MD) error { return nil }
func (*carriedCall) SetTrailer(metadata.MD) error { return nil }

// streamCarried reports whether ctx is that of a call a stream carries.
func streamCarried(ctx context.Context) bool {
	_, ok := grpc.ServerTransportStreamFromContext(ctx).(*carriedCall)
	return ok
}

// admitted runs handle for req under the admission of method, as its
// call made alone would run (admitCall): the codec's mark, the caller's
// token and budget.
func (a *AgentServer) admitted(ctx context.Context, req any, method string, handle func(context.Context) error) error {
	ctx, release, err := a.s.admitCall(ctx, req, method)
	if err != nil {
		return err
	}
	defer release()
	return handle(ctx)
}
