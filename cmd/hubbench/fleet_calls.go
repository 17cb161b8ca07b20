package main

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// wakeStream is an agent's stream of wake-ups.
type wakeStream = grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame]

// streamCalls carries an agent's calls on the stream it holds, when the
// hub takes them there (SubscribeFrame.calls, more_calls), as hub mcp
// does (internal/mcpbridge/streamcalls.go): a call is a request and a
// reply frame, not a call of its own.
type streamCalls struct {
	send sync.Mutex // one request at a time on the stream

	mu      sync.Mutex
	st      wakeStream      // nil: none takes calls
	more    map[string]bool // the calls it takes beyond the first four
	last    uint64
	waiting map[uint64]chan *hubv1.StreamReply
}

// errNoStream says the call was not carried: make it alone.
var errNoStream = errors.New("no stream takes the call")

// firstCalls are the calls every stream that takes calls takes.
var firstCalls = map[string]bool{"wait_for_messages": true, "list_messages": true, "mark_read": true, "heartbeat": true}

func (c *streamCalls) sendOn(st wakeStream, req *hubv1.SubscribeRequest) error {
	c.send.Lock()
	defer c.send.Unlock()
	return st.Send(req)
}

// attach makes st, whose first frame listed more, the stream calls ride on.
func (c *streamCalls) attach(st wakeStream, more []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st, c.more = st, map[string]bool{}
	for _, name := range more {
		c.more[name] = true
	}
}

// detach ends the calls on st: those waiting are made alone.
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

// deliver hands a reply to the call waiting for it.
func (c *streamCalls) deliver(r *hubv1.StreamReply) {
	c.mu.Lock()
	ch := c.waiting[r.GetId()]
	delete(c.waiting, r.GetId())
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// call carries call on the stream and returns its reply, or its error;
// errNoStream when no stream took it to its end.
func (c *streamCalls) call(ctx context.Context, call *hubv1.StreamCall) (*hubv1.StreamReply, error) {
	m := call.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("call"))
	c.mu.Lock()
	st := c.st
	if st == nil || fd == nil || !firstCalls[string(fd.Name())] && !c.more[string(fd.Name())] {
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
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	if err := c.sendOn(st, &hubv1.SubscribeRequest{Call: call}); err != nil {
		forget()
		return nil, errNoStream
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errNoStream
		}
		if e := r.GetError(); e != nil {
			return nil, status.Error(codes.Code(e.GetCode()), e.GetMessage())
		}
		return r, nil
	case <-ctx.Done():
		forget()
		_ = c.sendOn(st, &hubv1.SubscribeRequest{CancelId: id})
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}
