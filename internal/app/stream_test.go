package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// wakeStream is the client's side of a stream of wake-ups.
type wakeStream = grpc.BidiStreamingClient[hubv1.SubscribeRequest, hubv1.SubscribeFrame]

// openStream opens a stream of wake-ups with its first request.
func openStream(ctx context.Context, c hubv1.AgentServiceClient, req *hubv1.SubscribeRequest) (wakeStream, error) {
	st, err := c.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	return st, st.Send(req)
}

// subscribe opens alice's stream (via channel) after cursor after, reads
// its first frame and returns the stream and that frame's cursor; the
// stream ends with the test.
func subscribe(t *testing.T, c hubv1.AgentServiceClient, token, after string, limit int32) (wakeStream, string, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(coreBearer(token))
	t.Cleanup(cancel)
	st, err := openStream(ctx, c, &hubv1.SubscribeRequest{AfterId: after, Via: "channel", Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if first.GetStatus() == nil || len(first.GetMessages()) > 0 {
		t.Fatalf("first frame = %v, want the cursor and the status only", first)
	}
	return st, first.GetCursor(), cancel
}

// recvIDs reads frames until it holds n message IDs, and returns them with
// the last frame's cursor.
func recvIDs(t *testing.T, st wakeStream, n int) ([]string, string) {
	t.Helper()
	var ids []string
	var cursor string
	for len(ids) < n {
		f, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(ids), n, err)
		}
		if f.GetResync() {
			t.Fatalf("resync frame after %d of %d messages: this hub holds up its sends instead", len(ids), n)
		}
		for _, m := range f.GetMessages() {
			ids = append(ids, m.GetId())
		}
		cursor = f.GetCursor()
	}
	return ids, cursor
}

// post sends n messages from the token's agent to "alice" and returns their IDs.
func postN(t *testing.T, c hubv1.AgentServiceClient, token string, n int, body string) []string {
	t.Helper()
	var ids []string
	for i := range n {
		r, err := c.PostMessage(coreBearer(token), &hubv1.PostMessageRequest{To: []string{"alice"}, Body: fmt.Sprintf("%s %d", body, i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetMessage().GetId())
	}
	return ids
}

// receipt returns alice's receipt of message id.
func receipt(t *testing.T, c hubv1.AgentServiceClient, bobTok, id string) *hubv1.Receipt {
	t.Helper()
	r, err := c.GetMessageReceipts(coreBearer(bobTok), &hubv1.GetMessageReceiptsRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range r.GetReceipts() {
		if rc.GetAgent() == "alice" {
			return rc
		}
	}
	t.Fatalf("no receipt of alice for %s: %v", id, r)
	return nil
}

// A post reaches the subscribed agent as a frame over a real socket; the
// frame marks it delivered, not in context, until the path confirms it.
func TestSubscribeFramesArriveOnPost(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	st, _, _ := subscribe(t, h.agent, alice, "", 0)
	posted := postN(t, h.agent, bob, 3, "hello")
	got, _ := recvIDs(t, st, 3)
	if strings.Join(got, ",") != strings.Join(posted, ",") {
		t.Fatalf("frames carried %v, want %v", got, posted)
	}
	// The delivery marks are written just after the frame is sent.
	within(t, "the message sent on the stream marked delivered", func() bool { return receipt(t, h.agent, bob, posted[0]).GetDeliveredAt() != nil })
	if rc := receipt(t, h.agent, bob, posted[0]); rc.GetState() != string(hub.StateQueued) || rc.GetInContextAt() != nil {
		t.Fatalf("receipt before the confirmation = %v, want delivered and QUEUED", rc)
	}
	if _, err := h.agent.ConfirmDelivery(coreBearer(alice), &hubv1.ConfirmDeliveryRequest{Ids: posted, Via: "channel"}); err != nil {
		t.Fatal(err)
	}
	within(t, "the receipt IN_CONTEXT via channel after the confirmation", func() bool {
		rc := receipt(t, h.agent, bob, posted[2])
		return rc.GetState() == string(hub.StateInContext) && rc.GetVia() == "channel"
	})
}

// The path confirms on the stream itself what reached the agent's context:
// the receipts say IN_CONTEXT via channel with no ConfirmDelivery call. A
// later request naming a message not delivered to the agent, or setting
// what only the first sets, ends the stream with a clear error.
func TestSubscribeConfirmsOnTheStream(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	h.newAgent(t, "carol")
	st, _, _ := subscribe(t, h.agent, alice, "", 0)
	posted := postN(t, h.agent, bob, 3, "hello")
	got, _ := recvIDs(t, st, 3)
	if err := st.Send(&hubv1.SubscribeRequest{ConfirmIds: got}); err != nil {
		t.Fatal(err)
	}
	for _, id := range posted {
		within(t, "the receipt of "+id+" IN_CONTEXT via channel after the confirmation on the stream", func() bool {
			rc := receipt(t, h.agent, bob, id)
			return rc.GetState() == string(hub.StateInContext) && rc.GetVia() == "channel"
		})
	}

	r, err := h.agent.PostMessage(coreBearer(bob), &hubv1.PostMessageRequest{To: []string{"carol"}, Body: "not for alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  *hubv1.SubscribeRequest
		code codes.Code
		want string
	}{
		{&hubv1.SubscribeRequest{ConfirmIds: []string{r.GetMessage().GetId()}}, codes.NotFound, "not among the messages delivered to you"},
		{&hubv1.SubscribeRequest{ConfirmIds: posted, Via: "channel"}, codes.InvalidArgument, "and nothing else"},
		{&hubv1.SubscribeRequest{}, codes.InvalidArgument, "and nothing else"},
		{&hubv1.SubscribeRequest{ConfirmIds: []string{"x"}}, codes.InvalidArgument, "ids"},
	} {
		st, _, _ := subscribe(t, h.agent, alice, "", 0)
		if err := st.Send(tc.req); err != nil {
			t.Fatal(err)
		}
		var err error
		for err == nil {
			_, err = st.Recv()
		}
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a later request %v: the stream ended with %v, want %v naming %q", tc.req, err, tc.code, tc.want)
		}
	}
}

// A stream ended and opened again from its last cursor gets what was posted
// in between, nothing twice.
func TestSubscribeResumesFromCursor(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	st, _, cancel := subscribe(t, h.agent, alice, "", 0)
	first := postN(t, h.agent, bob, 2, "before")
	got, cursor := recvIDs(t, st, 2)
	cancel()
	h.parked(t, 0)
	between := postN(t, h.agent, bob, 3, "between")
	st, _, _ = subscribe(t, h.agent, alice, cursor, 0)
	after := postN(t, h.agent, bob, 1, "after")
	more, _ := recvIDs(t, st, 4)
	got = append(got, more...)
	want := append(append(first, between...), after...)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("frames carried %v, want %v", got, want)
	}
}

// The hub restarted under a streaming agent: the stream ends, the agent
// subscribes again on the new hub from its last cursor, and every message,
// posted before, while down and after, arrives once.
func TestSubscribeAcrossHubRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := startCoreHub(t, dir, nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	st, _, _ := subscribe(t, h.agent, alice, "", 0)
	want := postN(t, h.agent, bob, 2, "before")
	got, cursor := recvIDs(t, st, 2)
	// Posted and not yet read by the agent when the hub stops: the frame
	// may or may not have left; the cursor says what the agent has.
	want = append(want, postN(t, h.agent, bob, 1, "at the stop")...)
	if err := h.m.Close(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := st.Recv()
		if err != nil {
			if c := status.Code(err); c != codes.Unavailable {
				t.Fatalf("the stream ended with %v, want Unavailable", err)
			}
			break
		}
		for _, m := range f.GetMessages() {
			got = append(got, m.GetId())
		}
		cursor = f.GetCursor()
	}

	h2 := startCoreHub(t, dir, nil)
	want = append(want, postN(t, h2.agent, bob, 2, "after the restart")...)
	st, _, _ = subscribe(t, h2.agent, alice, cursor, 0)
	more, _ := recvIDs(t, st, len(want)-len(got))
	got = append(got, more...)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("frames carried %v, want %v (each once)", got, want)
	}
}

// A reader that stops reading while messages keep coming holds up the
// hub's sends (gRPC's flow-control windows) instead of growing a queue in
// the hub; once it reads again, every message comes, in order and once,
// on the same stream.
func TestSubscribeSlowReaderHoldsUpTheStream(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice, bob := h.newAgent(t, "alice"), h.newAgent(t, "bob")
	// A connection whose windows stay at gRPC's initial 64 KiB: the
	// reader that does not read holds up the hub's sends.
	conn, err := grpc.NewClient(h.m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	slow := hubv1.NewAgentServiceClient(conn)
	st, _, _ := subscribe(t, slow, alice, "", 1)
	// One message per frame, 8 KiB each: 8 fill the client's window, 8
	// the server's write quota, and the rest wait in the store, unread.
	body := strings.Repeat("x", 8<<10)
	n := 56
	want := postN(t, h.agent, bob, n, body)
	got, _ := recvIDs(t, st, n)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("frames carried %v, want %v", got, want)
	}
}

// Rotating the token ends the agent's stream at once, Unauthenticated.
func TestSubscribeEndsOnRevocation(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	st, _, _ := subscribe(t, h.agent, alice, "", 0)
	if _, err := h.admin.RotateToken(h.adm, &hubv1.RotateTokenRequest{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := st.Recv()
		ended <- err
	}()
	select {
	case err := <-ended:
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("the stream ended with %v, want Unauthenticated", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the stream did not end within a second of the rotation")
	}
}

// A stream is one of the agent's parked waits: past the per-agent limit,
// neither a stream nor a wait opens; once one ends, another may.
func TestSubscribeCountsAsParkedWait(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 2, Total: 100} })
	alice := h.newAgent(t, "alice")
	subscribe(t, h.agent, alice, "", 0)
	_, _, cancel := subscribe(t, h.agent, alice, "", 0)
	st, err := openStream(coreBearer(alice), h.agent, &hubv1.SubscribeRequest{Via: "channel"})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a third stream: %v, want ResourceExhausted", err)
	}
	if _, err := h.agent.WaitForMessages(coreBearer(alice), &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(1)}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a wait beside two streams: %v, want ResourceExhausted", err)
	}
	cancel()
	h.parked(t, 1)
	subscribe(t, h.agent, alice, "", 0)
}

// A stream needs the path it feeds, and a readable cursor.
func TestSubscribeBadInput(t *testing.T) {
	t.Parallel()
	h := startCoreHub(t, "", nil)
	alice := h.newAgent(t, "alice")
	for _, tc := range []struct {
		req  *hubv1.SubscribeRequest
		want string
	}{
		{&hubv1.SubscribeRequest{}, "via is empty"},
		{&hubv1.SubscribeRequest{Via: "wait"}, `via "wait" is not one of channel, tmux`},
		{&hubv1.SubscribeRequest{Via: "channel", AfterId: "x"}, "after_id"},
		{&hubv1.SubscribeRequest{Via: "channel", AfterId: "99"}, "beyond the newest message"},
		{&hubv1.SubscribeRequest{Via: "channel", ConfirmIds: []string{"1"}}, "confirm_ids is set in the first request"},
	} {
		st, err := openStream(coreBearer(alice), h.agent, tc.req)
		if err == nil {
			_, err = st.Recv()
		}
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Subscribe(%v) = %v, want InvalidArgument naming %q", tc.req, err, tc.want)
		}
	}
	h.parked(t, 0)
}
