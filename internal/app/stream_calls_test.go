package app_test

import (
	"context"
	"strings"
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// watchStream opens alice's watch stream (as hub mcp holds it for a client
// without channel notifications) and checks that its first frame says the
// hub takes calls on it.
func watchStream(t *testing.T, c hubv1.AgentServiceClient, token string) (wakeStream, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(coreBearer(token))
	t.Cleanup(cancel)
	st, err := openStream(ctx, c, &hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if !first.GetCalls() {
		t.Fatalf("first frame = %v, want calls set: this hub takes calls on the stream", first)
	}
	return st, cancel
}

// callOn sends call on st and reads frames until its reply.
func callOn(t *testing.T, st wakeStream, call *hubv1.StreamCall) *hubv1.StreamReply {
	t.Helper()
	if err := st.Send(&hubv1.SubscribeRequest{Call: call}); err != nil {
		t.Fatal(err)
	}
	return replyOf(t, st, call.GetId())
}

// replyOf reads frames until the reply to call id.
func replyOf(t *testing.T, st wakeStream, id uint64) *hubv1.StreamReply {
	t.Helper()
	for {
		f, err := st.Recv()
		if err != nil {
			t.Fatalf("waiting for the reply to call %d: %v", id, err)
		}
		if r := f.GetReply(); r != nil {
			if r.GetId() != id {
				t.Fatalf("reply to call %d, want %d: %v", r.GetId(), id, r)
			}
			if len(f.GetMessages()) > 0 || f.GetCursor() != "" {
				t.Fatalf("a reply frame carries more than the reply: %v", f)
			}
			return r
		}
	}
}

// A wait carried by the stream is the agent's own wait: parked until a
// post, it answers with what the wait made alone answers (the messages,
// cursor and status), and the messages are IN_CONTEXT via wait; a read and
// a mark on the stream answer as ListMessages and MarkRead do.
func TestSubscribeCarriesWaitsAndReads(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	st, _ := watchStream(t, h.agent, alice)
	if err := st.Send(&hubv1.SubscribeRequest{Call: &hubv1.StreamCall{Id: 1, Call: &hubv1.StreamCall_WaitForMessages{
		WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)},
	}}}); err != nil {
		t.Fatal(err)
	}
	h.parked(t, 2) // the stream and its wait
	posted := postN(t, h.agent, bob, 1, "hello")
	w := replyOf(t, st, 1).GetWaitForMessages()
	if w == nil || w.GetTimedOut() || messageIDs(w.GetMessages()) != posted[0] || w.GetCursor() != posted[0] || w.GetStatus() == nil {
		t.Fatalf("the wait's reply = %v, want %v with the cursor at it and the status", w, posted)
	}
	// Marked by the stream's wait: no other call has read it.
	within(t, "the receipt of "+posted[0]+" IN_CONTEXT via wait", func() bool {
		rc := receipt(t, h.agent, bob, posted[0])
		return rc.GetState() == string(hub.StateInContext) && rc.GetVia() == "wait"
	})
	posted = append(posted, postN(t, h.agent, bob, 1, "again")...)
	// The same wait made alone answers the same.
	alone, err := h.agent.WaitForMessages(coreBearer(alice), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	peek := callOn(t, st, &hubv1.StreamCall{Id: 2, Call: &hubv1.StreamCall_WaitForMessages{
		WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)},
	}}).GetWaitForMessages()
	if messageIDs(peek.GetMessages()) != strings.Join(posted, ",") || messageIDs(alone.GetMessages()) != messageIDs(peek.GetMessages()) ||
		peek.GetCursor() != alone.GetCursor() || peek.GetTimedOut() != alone.GetTimedOut() {
		t.Fatalf("a peek on the stream = %v, alone %v: want the same, %v", peek, alone, posted)
	}
	read := callOn(t, st, &hubv1.StreamCall{Id: 3, Call: &hubv1.StreamCall_ListMessages{
		ListMessages: &hubv1.ListMessagesRequest{UnreadOnly: true},
	}}).GetListMessages()
	if messageIDs(read.GetMessages()) != strings.Join(posted, ",") {
		t.Fatalf("a read on the stream = %v, want %v", read, posted)
	}
	mark := callOn(t, st, &hubv1.StreamCall{Id: 4, Call: &hubv1.StreamCall_MarkRead{
		MarkRead: &hubv1.MarkReadRequest{UpToId: posted[1]},
	}}).GetMarkRead()
	if mark == nil || mark.GetUnreadCount() != 0 {
		t.Fatalf("a mark on the stream = %v, want no message unread", mark)
	}
}

// A heartbeat carried by the stream starts a unit of work as the call
// alone does: the status names its heartbeat ID.
func TestSubscribeCarriesHeartbeats(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	st, _ := watchStream(t, h.agent, alice)
	hb := callOn(t, st, &hubv1.StreamCall{Id: 7, Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}}).GetHeartbeat()
	if hb.GetHeartbeatId() == "" {
		t.Fatalf("the heartbeat's reply = %v, want a heartbeat ID", hb)
	}
	s, err := h.agent.GetStatus(coreBearer(alice), &hubv1.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s.GetStatus().GetCurrentHeartbeatId() != hb.GetHeartbeatId() {
		t.Fatalf("status heartbeat ID = %q, want the stream's heartbeat %q", s.GetStatus().GetCurrentHeartbeatId(), hb.GetHeartbeatId())
	}
}

// A call the stream carries that fails answers with the error the call
// alone ends with, and the stream goes on; a caller that gives up on a
// parked wait ends it (cancel_id), and the stream's end ends its waits.
func TestSubscribeCallErrorsAndCancels(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	st, cancel := watchStream(t, h.agent, alice)
	bad := callOn(t, st, &hubv1.StreamCall{Id: 1, Call: &hubv1.StreamCall_WaitForMessages{
		WaitForMessages: &hubv1.WaitForMessagesRequest{AfterId: "99", TimeoutSeconds: proto.Int32(5)},
	}}).GetError()
	_, alone := h.agent.WaitForMessages(coreBearer(alice), &hubv1.WaitForMessagesRequest{AfterId: "99", TimeoutSeconds: proto.Int32(5)})
	if codes.Code(bad.GetCode()) != codes.InvalidArgument || !strings.Contains(alone.Error(), bad.GetMessage()) {
		t.Fatalf("a wait after a cursor beyond the newest message: %v, want InvalidArgument as alone: %v", bad, alone)
	}

	if err := st.Send(&hubv1.SubscribeRequest{Call: &hubv1.StreamCall{Id: 2, Call: &hubv1.StreamCall_WaitForMessages{
		WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(60)},
	}}}); err != nil {
		t.Fatal(err)
	}
	h.parked(t, 2)
	if err := st.Send(&hubv1.SubscribeRequest{CancelId: 2}); err != nil {
		t.Fatal(err)
	}
	if r := replyOf(t, st, 2); codes.Code(r.GetError().GetCode()) != codes.Canceled {
		t.Fatalf("the reply to a wait ended by cancel_id = %v, want Canceled", r)
	}
	h.parked(t, 1)
	if hb := callOn(t, st, &hubv1.StreamCall{Id: 2, Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}}); hb.GetHeartbeat() == nil {
		t.Fatalf("a heartbeat after the errors = %v, want its reply", hb)
	}

	if err := st.Send(&hubv1.SubscribeRequest{Call: &hubv1.StreamCall{Id: 3, Call: &hubv1.StreamCall_WaitForMessages{
		WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(60)},
	}}}); err != nil {
		t.Fatal(err)
	}
	h.parked(t, 2)
	cancel()
	h.parked(t, 0)
}

// A later request that carries a call the hub cannot tell apart, or more
// than one thing, ends the stream with what is wrong.
func TestSubscribeCallBadInput(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	wait := &hubv1.StreamCall_WaitForMessages{WaitForMessages: &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(60)}}
	for _, tc := range []struct {
		reqs []*hubv1.SubscribeRequest
		want string
	}{
		{[]*hubv1.SubscribeRequest{{Call: &hubv1.StreamCall{Call: wait}}}, "call.id is 0"},
		{[]*hubv1.SubscribeRequest{{Call: &hubv1.StreamCall{Id: 1}}}, "names no call"},
		{[]*hubv1.SubscribeRequest{{Call: &hubv1.StreamCall{Id: 1, Call: wait}}, {Call: &hubv1.StreamCall{Id: 1, Call: wait}}}, "still running"},
		{[]*hubv1.SubscribeRequest{{Call: &hubv1.StreamCall{Id: 1, Call: wait}, CancelId: 2}}, "and nothing else"},
	} {
		st, _ := watchStream(t, h.agent, alice)
		for _, req := range tc.reqs {
			if err := st.Send(req); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		for err == nil {
			_, err = st.Recv()
		}
		if !strings.Contains(err.Error(), "InvalidArgument") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("later requests %v: the stream ended with %v, want InvalidArgument naming %q", tc.reqs, err, tc.want)
		}
	}
	for _, first := range []*hubv1.SubscribeRequest{
		{Watch: true, Call: &hubv1.StreamCall{Id: 1, Call: wait}},
		{Watch: true, CancelId: 1},
	} {
		st, err := openStream(coreBearer(alice), h.agent, first)
		if err == nil {
			_, err = st.Recv()
		}
		if err == nil || !strings.Contains(err.Error(), "is set in the first request") {
			t.Errorf("Subscribe(%v) = %v, want InvalidArgument: set in the first request", first, err)
		}
	}
	h.parked(t, 0)
}

// messageIDs joins the IDs of ms.
func messageIDs(ms []*hubv1.Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.GetId())
	}
	return strings.Join(out, ",")
}
