package server_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// waitOutcome is the outcome of a WaitForMessages call run in a goroutine.
type waitOutcome struct {
	res *hubv1.WaitForMessagesResponse
	err error
}

func startWait(ctx context.Context, c hubv1.AgentServiceClient, req *hubv1.WaitForMessagesRequest) <-chan waitOutcome {
	out := make(chan waitOutcome, 1)
	go func() {
		res, err := c.WaitForMessages(ctx, req)
		out <- waitOutcome{res, err}
	}()
	return out
}

// outcome waits for a wait to return, failing well before its 30 s timeout.
func outcome(tb testing.TB, c <-chan waitOutcome) waitOutcome {
	tb.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(20 * time.Second):
		tb.Fatal("WaitForMessages did not return within 20 s (it should have been woken long before its 30 s timeout)")
		return waitOutcome{}
	}
}

// parked waits until the hub holds n parked waits.
func (r *coreRig) parked(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for r.svc.Core.ParkedWaits() != n {
		if time.Now().After(deadline) {
			tb.Fatalf("parked waits = %d, want %d", r.svc.Core.ParkedWaits(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	bob, _ := r.newAgent(t, "bob")
	first, err := r.agent.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "hello @bob"})
	if err != nil {
		t.Fatal(err)
	}
	m := first.GetMessage()
	if m.GetId() == "" || m.GetFrom() != "alice" || !slices.Equal(m.GetTo(), []string{"bob"}) || m.GetBody() != "hello @bob" ||
		!slices.Equal(m.GetMentions(), []string{"bob"}) || m.GetCreatedAt() == nil || m.GetKind() != "message" || m.GetReplyTo() != "" {
		t.Errorf("posted message = %v", m)
	}
	reply, err := r.agent.PostMessage(bob, &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "hi", ReplyTo: m.GetId()})
	if err != nil || reply.GetMessage().GetReplyTo() != m.GetId() {
		t.Fatalf("reply = %v, %v; want reply_to %s", reply, err, m.GetId())
	}
	for range 3 {
		if _, err := r.agent.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := r.agent.ListMessages(bob, &hubv1.ListMessagesRequest{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.GetMessages()) != 2 || !page.GetHasMore() || page.GetCursor() != page.GetMessages()[1].GetId() {
		t.Errorf("first page = %v", page)
	}
	if got := page.GetMessages()[0]; !got.GetUnread() || !got.GetMentionsYou() {
		t.Errorf("first message for bob: unread %v mentions_you %v, want both", got.GetUnread(), got.GetMentionsYou())
	}
	rest, err := r.agent.ListMessages(bob, &hubv1.ListMessagesRequest{AfterId: page.GetCursor()})
	if err != nil || len(rest.GetMessages()) != 2 || rest.GetHasMore() {
		t.Errorf("second page = %v, %v; want 2 messages, no more", rest, err)
	}
	mr, err := r.agent.MarkRead(bob, &hubv1.MarkReadRequest{UpToId: page.GetCursor()})
	if err != nil || mr.GetUnreadCount() != 2 || mr.GetReadUpToId() != page.GetCursor() {
		t.Errorf("MarkRead = %v, %v; want 2 unread left, cursor %s", mr, err, page.GetCursor())
	}
	unread, _ := r.agent.ListMessages(bob, &hubv1.ListMessagesRequest{UnreadOnly: true})
	if len(unread.GetMessages()) != 2 {
		t.Errorf("unread only = %d messages, want 2", len(unread.GetMessages()))
	}
	hb, err := r.agent.Heartbeat(bob, &hubv1.HeartbeatRequest{})
	if err != nil || len(hb.GetHeartbeatId()) != 14 || hb.GetUnreadCount() != 2 || hb.GetStartedAt() == nil {
		t.Errorf("Heartbeat = %v, %v", hb, err)
	}
	st, err := r.agent.GetStatus(bob, &hubv1.GetStatusRequest{})
	if err != nil || st.GetStatus().GetUnreadCount() != 2 || st.GetStatus().GetCurrentHeartbeatId() != hb.GetHeartbeatId() ||
		st.GetStatus().GetHubTime() == nil || st.GetStatus().GetLatestMessageId() == "" {
		t.Errorf("GetStatus = %v, %v", st, err)
	}
	join, err := r.agent.JoinChannel(bob, &hubv1.JoinChannelRequest{Channel: "#ops"})
	if err != nil || !slices.Equal(join.GetMembers(), []string{"bob"}) {
		t.Errorf("JoinChannel = %v, %v", join, err)
	}
	if _, err := r.agent.LeaveChannel(bob, &hubv1.LeaveChannelRequest{Channel: "#ops"}); err != nil {
		t.Errorf("LeaveChannel: %v", err)
	}
	adminList, err := r.agent.ListMessages(r.adm, &hubv1.ListMessagesRequest{Agent: "alice"})
	if err != nil || len(adminList.GetMessages()) != 1 || adminList.GetMessages()[0].GetId() != reply.GetMessage().GetId() {
		t.Errorf("admin list for alice = %v, %v", adminList, err)
	}
}

// Bad input is refused with the right code and a readable message, and
// writes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t, func(c *hub.Config) { c.MaxBodyBytes = 1000 })
	alice, _ := r.newAgent(t, "alice")
	r.newAgent(t, "bob")
	agents, messages := r.counts(t)
	post := func(req *hubv1.PostMessageRequest) func() error {
		return func() error { _, err := r.agent.PostMessage(alice, req); return err }
	}
	tests := []struct {
		name string
		call func() error
		want codes.Code
		text string
	}{
		{"empty body", post(&hubv1.PostMessageRequest{To: []string{"bob"}}), codes.InvalidArgument, "body is empty"},
		{"oversize body", post(&hubv1.PostMessageRequest{To: []string{"bob"}, Body: strings.Repeat("x", 1001)}), codes.InvalidArgument, "limit is 1000"},
		{"no recipient", post(&hubv1.PostMessageRequest{Body: "x"}), codes.InvalidArgument, "no recipient"},
		{"bad recipient name", post(&hubv1.PostMessageRequest{To: []string{"B B"}, Body: "x"}), codes.InvalidArgument, "agent name"},
		{"unknown recipient", post(&hubv1.PostMessageRequest{To: []string{"ghost"}, Body: "x"}), codes.NotFound, `no agent named "ghost"`},
		{"bad channel", post(&hubv1.PostMessageRequest{Channel: "ops", Body: "x"}), codes.InvalidArgument, "channel"},
		{"unknown reply_to", post(&hubv1.PostMessageRequest{To: []string{"bob"}, Body: "x", ReplyTo: "77"}), codes.NotFound, "reply_to"},
		{"malformed reply_to", post(&hubv1.PostMessageRequest{To: []string{"bob"}, Body: "x", ReplyTo: "x7"}), codes.InvalidArgument, "reply_to"},
		{"unknown mention", post(&hubv1.PostMessageRequest{To: []string{"bob"}, Body: "x", Mentions: []string{"ghost"}}), codes.NotFound, "ghost"},
		{"malformed cursor", func() error {
			_, err := r.agent.ListMessages(alice, &hubv1.ListMessagesRequest{AfterId: "yesterday"})
			return err
		}, codes.InvalidArgument, "after_id"},
		{"negative limit", func() error {
			_, err := r.agent.ListMessages(alice, &hubv1.ListMessagesRequest{Limit: -1})
			return err
		}, codes.InvalidArgument, "limit"},
		{"malformed up_to_id", func() error {
			_, err := r.agent.MarkRead(alice, &hubv1.MarkReadRequest{UpToId: "all"})
			return err
		}, codes.InvalidArgument, "up_to_id"},
		{"negative timeout", func() error {
			_, err := r.agent.WaitForMessages(alice, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(-1)})
			return err
		}, codes.InvalidArgument, "timeout_seconds"},
		{"malformed wait cursor", func() error {
			_, err := r.agent.WaitForMessages(alice, &hubv1.WaitForMessagesRequest{AfterId: "-1"})
			return err
		}, codes.InvalidArgument, "after_id"},
		{"bad agent name", func() error {
			_, err := r.admin.CreateAgent(r.adm, &hubv1.CreateAgentRequest{Name: "-x"})
			return err
		}, codes.InvalidArgument, "agent name"},
		{"admin post to nobody", func() error {
			_, err := r.agent.PostMessage(r.adm, &hubv1.PostMessageRequest{To: []string{"ghost"}, Body: "x"})
			return err
		}, codes.NotFound, "ghost"},
		{"agent naming a project to post in", post(&hubv1.PostMessageRequest{To: []string{"bob"}, Body: "x", Project: "red"}), codes.PermissionDenied, "project is the admin's"},
		{"agent listing another agent's messages", func() error {
			_, err := r.agent.ListMessages(alice, &hubv1.ListMessagesRequest{Agent: "bob"})
			return err
		}, codes.PermissionDenied, "agent is the admin's"},
		{"agent listing a project", func() error {
			_, err := r.agent.ListMessages(alice, &hubv1.ListMessagesRequest{Project: "default"})
			return err
		}, codes.PermissionDenied, "project is the admin's"},
		{"agent asking for the newest", func() error {
			_, err := r.agent.ListMessages(alice, &hubv1.ListMessagesRequest{Newest: true})
			return err
		}, codes.PermissionDenied, "newest is the admin's"},
		{"admin listing unread", func() error {
			_, err := r.agent.ListMessages(r.adm, &hubv1.ListMessagesRequest{UnreadOnly: true})
			return err
		}, codes.InvalidArgument, "unread_only is an agent's"},
	}
	for _, tt := range tests {
		wantStatus(t, tt.name, tt.call(), tt.want, tt.text)
	}
	if a, m := r.counts(t); a != agents || m != messages {
		t.Errorf("after refused calls: %d agents, %d messages; want %d and %d", a, m, agents, messages)
	}
	if got := r.svc.Core.ParkedWaits(); got != 0 {
		t.Errorf("parked waits = %d, want 0", got)
	}
}

func TestWaitForMessages(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	bob, _ := r.newAgent(t, "bob")

	// Peek.
	peek, err := r.agent.WaitForMessages(bob, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(0)})
	if err != nil || !peek.GetTimedOut() || len(peek.GetMessages()) != 0 || peek.GetStatus().GetAgent() != "bob" {
		t.Errorf("peek = %v, %v; want timed_out with bob's status", peek, err)
	}

	// A huge timeout with a short deadline: a timed-out reply a little
	// before the deadline, not DEADLINE_EXCEEDED.
	ctx, cancel := context.WithTimeout(bob, 1500*time.Millisecond)
	defer cancel()
	res, err := r.agent.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(3600)})
	if err != nil {
		t.Fatalf("wait with a 1.5 s deadline: %v, want a timed-out reply", err)
	}
	if !res.GetTimedOut() || res.GetStatus() == nil {
		t.Errorf("wait with a deadline = %v, want timed_out with a status", res)
	}

	// Woken by a post.
	c := startWait(bob, r.agent, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	r.parked(t, 1)
	p, err := r.agent.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "wake"})
	if err != nil {
		t.Fatal(err)
	}
	o := outcome(t, c)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.GetTimedOut() || len(o.res.GetMessages()) != 1 || o.res.GetMessages()[0].GetId() != p.GetMessage().GetId() ||
		o.res.GetCursor() != p.GetMessage().GetId() || o.res.GetStatus().GetUnreadCount() != 1 {
		t.Errorf("woken wait = %v", o.res)
	}

	// The message still unread: the next wait answers at once with it
	// (what its first look found, before the interceptors), parking nothing.
	again, err := r.agent.WaitForMessages(bob, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	if err != nil || again.GetTimedOut() || len(again.GetMessages()) != 1 || again.GetMessages()[0].GetId() != p.GetMessage().GetId() ||
		again.GetCursor() != p.GetMessage().GetId() || again.GetStatus().GetUnreadCount() != 1 {
		t.Errorf("wait with the message unread = %v, %v; want it at once", again, err)
	}
	if n := r.svc.Core.ParkedWaits(); n != 0 {
		t.Errorf("%d waits registered after the wait returned, want none", n)
	}
}

// A wait parked on one TCP connection wakes on a post sent over another.
func TestWaitWakesAcrossConnections(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t)
	alice, _ := r.newAgent(t, "alice")
	bob, _ := r.newAgent(t, "bob")
	waiter := hubv1.NewAgentServiceClient(r.loopback(t))
	poster := hubv1.NewAgentServiceClient(r.loopback(t))
	var cursor string
	for i := range 5 {
		c := startWait(bob, waiter, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30), AfterId: cursor})
		r.parked(t, 1)
		p, err := poster.PostMessage(alice, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: fmt.Sprint("round ", i)})
		if err != nil {
			t.Fatal(err)
		}
		o := outcome(t, c)
		if o.err != nil {
			t.Fatalf("round %d: %v", i, o.err)
		}
		if len(o.res.GetMessages()) != 1 || o.res.GetMessages()[0].GetId() != p.GetMessage().GetId() {
			t.Fatalf("round %d: woken wait = %v, want message %s", i, o.res, p.GetMessage().GetId())
		}
		cursor = o.res.GetCursor()
	}
}

func TestWaitLimitsResourceExhausted(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 1, Total: 2} })
	bob, bobToken := r.newAgent(t, "bob")
	_, carolToken := r.newAgent(t, "carol")
	dave, _ := r.newAgent(t, "dave")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := startWait(withToken(ctx, bobToken), r.agent, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	r.parked(t, 1)
	_, err := r.agent.WaitForMessages(bob, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	wantStatus(t, "second wait of bob", err, codes.ResourceExhausted, "per-agent limit")
	c := startWait(withToken(ctx, carolToken), r.agent, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	r.parked(t, 2)
	_, err = r.agent.WaitForMessages(dave, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
	wantStatus(t, "a wait past the total", err, codes.ResourceExhausted, "limit")
	cancel()
	for _, ch := range []<-chan waitOutcome{b, c} {
		if o := outcome(t, ch); status.Code(o.err) != codes.Canceled {
			t.Errorf("cancelled wait = %v, want Canceled", o.err)
		}
	}
	r.parked(t, 0)
}

// Cancelled waits free their waiters at once and leave no goroutine behind.
func TestCancelledWaitsLeaveNoGoroutines(t *testing.T) {
	r := newCoreRig(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 1000, Total: 1000} })
	bob, _ := r.newAgent(t, "bob")
	client := hubv1.NewAgentServiceClient(r.loopback(t))
	if _, err := client.GetStatus(bob, &hubv1.GetStatusRequest{}); err != nil { // connect
		t.Fatal(err)
	}
	settle := func() int {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	baseline := settle()

	const n = 200
	for round := range 2 {
		ctx, cancel := context.WithCancel(bob)
		outs := make([]<-chan waitOutcome, n)
		for i := range outs {
			outs[i] = startWait(ctx, client, &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
		}
		r.parked(t, n)
		if got := runtime.NumGoroutine(); got < baseline+n {
			t.Fatalf("round %d: %d goroutines with %d waits parked, baseline %d: the count does not see them", round, got, n, baseline)
		}
		cancel()
		for _, o := range outs {
			if o := outcome(t, o); status.Code(o.err) != codes.Canceled {
				t.Fatalf("round %d: cancelled wait = %v, want Canceled", round, o.err)
			}
		}
		r.parked(t, 0)
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := settle()
			if got <= baseline+5 {
				break
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("round %d: %d goroutines after cancelling %d waits, baseline %d\n%s", round, got, n, baseline, buf)
			}
		}
	}
	// The connection still works.
	if _, err := client.GetStatus(bob, &hubv1.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}
}

// Many waits of one agent all wake on one post.
func TestManyWaitsWakeTogether(t *testing.T) {
	t.Parallel()
	r := newCoreRig(t, func(c *hub.Config) { c.WaitLimits = hub.WaitLimits{PerAgent: 100, Total: 1000} })
	alice, _ := r.newAgent(t, "alice")
	var ctxs []context.Context
	for i := range 20 {
		ctx, _ := r.newAgent(t, fmt.Sprint("agent-", i))
		ctxs = append(ctxs, ctx)
	}
	var wg sync.WaitGroup
	results := make([]waitOutcome, len(ctxs)*2)
	for i := range results {
		wg.Go(func() {
			res, err := r.agent.WaitForMessages(ctxs[i/2], &hubv1.WaitForMessagesRequest{TimeoutSeconds: proto.Int32(30)})
			results[i] = waitOutcome{res, err}
		})
	}
	r.parked(t, len(results))
	var to []string
	for i := range ctxs {
		to = append(to, fmt.Sprint("agent-", i))
	}
	if _, err := r.agent.PostMessage(alice, &hubv1.PostMessageRequest{To: to, Body: "everyone"}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, o := range results {
		if o.err != nil || o.res.GetTimedOut() || len(o.res.GetMessages()) != 1 {
			t.Errorf("wait %d = %v, %v; want the message", i, o.res, o.err)
		}
	}
}
