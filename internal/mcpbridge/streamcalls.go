package mcpbridge

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// wakeStream is the bridge's side of the hub's stream of wake-ups.
type wakeStream = grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame]

// streamCalls carries the bridge's waits, reads and heartbeats, and its
// hooks' injections, host events, stops, session ends and approvals, on the stream of wake-ups its pusher holds, when the hub takes calls on it
// (SubscribeFrame.calls): a call is a request and a frame, not a call of
// its own. Without such a stream (a hub without it, the stream down
// between two hubs, before the client initialized), or when the stream
// ends before the reply, the call is made alone, as before.
type streamCalls struct {
	// send serialises the stream's requests: the pusher's confirmations
	// and the tools' calls (gRPC sends on a stream from one goroutine at
	// a time).
	send sync.Mutex

	mu      sync.Mutex
	st      wakeStream      // the stream that takes calls; nil: none
	more    map[string]bool // the calls it takes beyond the first four (SubscribeFrame.more_calls)
	last    uint64          // the last call's id
	waiting map[uint64]chan *hubv1.StreamReply
}

// errNoStream says the call was not carried: make it alone.
var errNoStream = errors.New("no stream of wake-ups takes calls")

// sendOn sends req on st, one request at a time.
func (c *streamCalls) sendOn(st wakeStream, req *hubv1.SubscribeRequest) error {
	c.send.Lock()
	defer c.send.Unlock()
	return st.Send(req)
}

// attach makes st the stream calls ride on; its first frame listed more,
// the calls it takes beyond the first four.
func (c *streamCalls) attach(st wakeStream, more []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st = st
	c.more = map[string]bool{}
	for _, name := range more {
		c.more[name] = true
	}
}

// firstCalls are the calls every stream that takes calls takes, by their
// StreamCall field names.
var firstCalls = map[string]bool{"wait_for_messages": true, "list_messages": true, "mark_read": true, "heartbeat": true}

// takes reports whether st takes call: a hub ends the stream on a call it
// does not know.
func (c *streamCalls) takes(call *hubv1.StreamCall) bool {
	m := call.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("call"))
	if fd == nil {
		return false
	}
	name := string(fd.Name())
	return firstCalls[name] || c.more[name]
}

// detach ends the calls on st, if it is the stream calls ride on: those
// waiting for a reply are made alone (call).
func (c *streamCalls) detach(st wakeStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st != st {
		return
	}
	c.st = nil
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}

// deliver hands a reply the stream carried to the call waiting for it.
func (c *streamCalls) deliver(r *hubv1.StreamReply) {
	c.mu.Lock()
	ch := c.waiting[r.GetId()]
	delete(c.waiting, r.GetId())
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// forget stops waiting for the reply to id.
func (c *streamCalls) forget(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.waiting, id)
}

// call carries call on the stream and returns its reply, or the error the
// call alone would have ended with; errNoStream when no stream carried it
// to its end (make it alone). When ctx ends first, the hub is told to end
// the call (cancel_id).
func (c *streamCalls) call(ctx context.Context, call *hubv1.StreamCall) (*hubv1.StreamReply, error) {
	c.mu.Lock()
	st := c.st
	if st == nil || !c.takes(call) {
		c.mu.Unlock()
		return nil, errNoStream
	}
	if c.waiting == nil {
		c.waiting = map[uint64]chan *hubv1.StreamReply{}
	}
	c.last++
	id := c.last
	ch := make(chan *hubv1.StreamReply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	call.Id = id
	if err := c.sendOn(st, &hubv1.SubscribeRequest{Call: call}); err != nil {
		c.forget(id)
		return nil, errNoStream
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errNoStream // the stream ended first
		}
		if e := r.GetError(); e != nil {
			return nil, status.Error(codes.Code(e.GetCode()), e.GetMessage())
		}
		return r, nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.sendOn(st, &hubv1.SubscribeRequest{CancelId: id}) // a stream that ended ended the call
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}
