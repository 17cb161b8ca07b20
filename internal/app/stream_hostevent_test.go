package app_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
)

// A host's event carried by the stream (a bridge answering its agent's
// notification hook) is NoteHostEvent: waiting for a person opens the
// needs-input item once, working again withdraws it. It is counted in
// hub_rpcs_total under its own name (and in hub_stream_calls_total) and
// logged as the call alone, via=stream; a bad one fails as the call alone
// fails, and the stream goes on.
func TestSubscribeCarriesHostEvents(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := &coreHub{m: m, token: adminTok, admin: hubv1.NewAdminServiceClient(conn), agent: hubv1.NewAgentServiceClient(conn), adm: coreBearer(adminTok), base: "http://" + m.HTTPAddress()}
	alice := h.newAgent(t, "alice")

	ctx, cancel := context.WithCancel(coreBearer(alice))
	defer cancel()
	st, err := openStream(ctx, h.agent, &hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if !first.GetCalls() || !slices.Contains(first.GetMoreCalls(), "note_host_event") {
		t.Fatalf("first frame = %v, want calls set and more_calls naming note_host_event", first)
	}
	note := func(id uint64, req *hubv1.NoteHostEventRequest) *hubv1.StreamReply {
		t.Helper()
		return callOn(t, st, &hubv1.StreamCall{Id: id, Call: &hubv1.StreamCall_NoteHostEvent{NoteHostEvent: req}})
	}
	open := func() []string {
		t.Helper()
		r, err := h.admin.ListInbox(h.adm, &hubv1.ListInboxRequest{State: "open"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range r.GetItems() {
			out = append(out, it.GetAgent()+" "+it.GetKind()+" "+it.GetTitle())
		}
		return out
	}

	for id := uint64(1); id <= 2; id++ {
		if r := note(id, &hubv1.NoteHostEventRequest{Event: "needs_input", Text: "Claude is waiting for your input"}); r.GetNoteHostEvent() == nil {
			t.Fatalf("needs_input on the stream = %v, want its reply", r)
		}
	}
	if got, want := open(), []string{"alice needs_input Claude is waiting for your input"}; !slices.Equal(got, want) {
		t.Fatalf("the open inbox after two notifications = %q, want %q", got, want)
	}
	if r := note(3, &hubv1.NoteHostEventRequest{Event: "active"}); r.GetNoteHostEvent() == nil {
		t.Fatalf("active on the stream = %v, want its reply", r)
	}
	if got := open(); len(got) != 0 {
		t.Fatalf("the open inbox once alice works again = %q, want nothing", got)
	}

	for i, req := range []*hubv1.NoteHostEventRequest{
		{Event: "sleeping"},
		{Event: "tool_ran", CallKey: strings.Repeat("k", 1000)},
	} {
		got := note(uint64(10+i), req).GetError()
		_, alone := h.agent.NoteHostEvent(coreBearer(alice), req)
		if codes.Code(got.GetCode()) != codes.InvalidArgument || alone == nil || !strings.Contains(alone.Error(), got.GetMessage()) {
			t.Errorf("%v on the stream: %v; want InvalidArgument as alone: %v", req, got, alone)
		}
	}
	if r := note(12, &hubv1.NoteHostEventRequest{Event: "active"}); r.GetNoteHostEvent() == nil {
		t.Fatalf("the stream after the errors: %v", r)
	}

	_, metrics, _ := h.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`hub_rpcs_total{code="OK",method="NoteHostEvent",service="AgentService"} 4`,
		`hub_stream_calls_total{code="OK",method="NoteHostEvent",service="AgentService"} 4`,
		`hub_rpcs_total{code="InvalidArgument",method="NoteHostEvent",service="AgentService"} 4`,
		`hub_stream_calls_total{code="InvalidArgument",method="NoteHostEvent",service="AgentService"} 2`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics has no line %q", want)
		}
	}
	var logged int
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "method=/hub.v1.AgentService/NoteHostEvent") && strings.Contains(line, "code=OK") &&
			strings.Contains(line, "agent=alice") && strings.Contains(line, "via=stream") {
			logged++
		}
	}
	if logged != 4 {
		t.Errorf("the log has %d lines of alice's NoteHostEvent via=stream, want 4", logged)
	}
}

// A stop and a session's end carried by the stream (a bridge answering
// its agent's Stop and SessionEnd hooks) are CheckStop and EndSession: the
// stop is held while a direct message is unread, the end takes the agent
// offline. Each is counted under its own name (and in
// hub_stream_calls_total) and logged as the call alone, via=stream; a bad
// one fails as the call alone fails, and the stream goes on.
func TestSubscribeCarriesStopAndSessionEnd(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	m := relHub(t, func(m *app.Main) {
		m.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := &coreHub{m: m, token: adminTok, admin: hubv1.NewAdminServiceClient(conn), agent: hubv1.NewAgentServiceClient(conn), adm: coreBearer(adminTok), base: "http://" + m.HTTPAddress()}
	alice := h.newAgent(t, "alice")
	bob := h.newAgent(t, "bob")

	ctx, cancel := context.WithCancel(coreBearer(alice))
	defer cancel()
	st, err := openStream(ctx, h.agent, &hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if more := first.GetMoreCalls(); !first.GetCalls() || !slices.Contains(more, "check_stop") || !slices.Contains(more, "end_session") {
		t.Fatalf("first frame = %v, want calls set and more_calls naming check_stop and end_session", first)
	}
	stop := func(id uint64) *hubv1.CheckStopResponse {
		t.Helper()
		r := callOn(t, st, &hubv1.StreamCall{Id: id, Call: &hubv1.StreamCall_CheckStop{CheckStop: &hubv1.CheckStopRequest{}}})
		if r.GetCheckStop() == nil {
			t.Fatalf("check_stop on the stream = %v, want its reply", r)
		}
		return r.GetCheckStop()
	}
	if r := stop(1); r.GetHold() {
		t.Fatalf("a stop with nothing unread on the stream = %v, want it let go", r)
	}
	posted, err := h.agent.PostMessage(coreBearer(bob), &hubv1.PostMessageRequest{To: []string{"alice"}, Body: "a question"})
	if err != nil {
		t.Fatal(err)
	}
	if r := stop(2); !r.GetHold() || len(r.GetMessages()) != 1 || r.GetMessages()[0].GetId() != posted.GetMessage().GetId() {
		t.Fatalf("a stop with bob's message unread on the stream = %v, want it held by that message", r)
	}

	end := func(id uint64, via string) *hubv1.StreamReply {
		t.Helper()
		return callOn(t, st, &hubv1.StreamCall{Id: id, Call: &hubv1.StreamCall_EndSession{EndSession: &hubv1.EndSessionRequest{Via: via}}})
	}
	req := &hubv1.EndSessionRequest{Via: "carrier pigeon"}
	got := end(3, req.GetVia()).GetError()
	_, alone := h.agent.EndSession(coreBearer(alice), req)
	if codes.Code(got.GetCode()) != codes.InvalidArgument || alone == nil || !strings.Contains(alone.Error(), got.GetMessage()) {
		t.Errorf("%v on the stream: %v; want InvalidArgument as alone: %v", req, got, alone)
	}
	if r := end(4, "hook"); r.GetEndSession() == nil {
		t.Fatalf("end_session on the stream after the error = %v, want its reply", r)
	}

	_, metrics, _ := h.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`hub_rpcs_total{code="OK",method="CheckStop",service="AgentService"} 2`,
		`hub_stream_calls_total{code="OK",method="CheckStop",service="AgentService"} 2`,
		`hub_rpcs_total{code="OK",method="EndSession",service="AgentService"} 1`,
		`hub_stream_calls_total{code="OK",method="EndSession",service="AgentService"} 1`,
		`hub_rpcs_total{code="InvalidArgument",method="EndSession",service="AgentService"} 2`,
		`hub_stream_calls_total{code="InvalidArgument",method="EndSession",service="AgentService"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics has no line %q", want)
		}
	}
	logged := map[string]int{}
	for _, line := range strings.Split(log.String(), "\n") {
		for _, method := range []string{"CheckStop", "EndSession"} {
			if strings.Contains(line, "method=/hub.v1.AgentService/"+method+" ") && strings.Contains(line, "code=OK") &&
				strings.Contains(line, "agent=alice") && strings.Contains(line, "via=stream") {
				logged[method]++
			}
		}
	}
	if logged["CheckStop"] != 2 || logged["EndSession"] != 1 {
		t.Errorf("the log has %v lines of alice's calls via=stream, want CheckStop 2 and EndSession 1", logged)
	}
}

// A permission request carried by the stream (a bridge answering its
// agent's PermissionRequest hook) is RequestApproval: it waits for a
// person as the call alone does, and the person's answer is its reply;
// one its caller ends (cancel_id: the hook is gone) stops waiting at once
// and is left to the terminal (expired, timed out), as the call alone
// its caller gave up on. Each is counted under its own name (and in
// hub_stream_calls_total).
func TestSubscribeCarriesApprovals(t *testing.T) {
	t.Parallel()
	m := relHub(t, nil)
	adminTok, err := m.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(m.GRPCAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h := &coreHub{m: m, token: adminTok, admin: hubv1.NewAdminServiceClient(conn), agent: hubv1.NewAgentServiceClient(conn), adm: coreBearer(adminTok), base: "http://" + m.HTTPAddress()}
	alice := h.newAgent(t, "alice")

	ctx, cancel := context.WithCancel(coreBearer(alice))
	defer cancel()
	st, err := openStream(ctx, h.agent, &hubv1.SubscribeRequest{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if !first.GetCalls() || !slices.Contains(first.GetMoreCalls(), "request_approval") {
		t.Fatalf("first frame = %v, want calls set and more_calls naming request_approval", first)
	}
	ask := func(id uint64) {
		t.Helper()
		req := &hubv1.RequestApprovalRequest{Tool: "Bash", Input: `{"command":"make deploy"}`, CallKey: "k1", WaitSeconds: 60}
		if err := st.Send(&hubv1.SubscribeRequest{Call: &hubv1.StreamCall{Id: id, Call: &hubv1.StreamCall_RequestApproval{RequestApproval: req}}}); err != nil {
			t.Fatal(err)
		}
	}
	openItem := func() *hubv1.InboxItem {
		t.Helper()
		for range 1000 {
			r, err := h.admin.ListInbox(h.adm, &hubv1.ListInboxRequest{State: "open"})
			if err != nil {
				t.Fatal(err)
			}
			if items := r.GetItems(); len(items) == 1 {
				return items[0]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("no open approval within 10 s")
		return nil
	}

	ask(1)
	it := openItem()
	if it.GetKind() != "approval" || it.GetAgent() != "alice" || it.GetTool() != "Bash" {
		t.Fatalf("the open item = %v, want alice's Bash approval", it)
	}
	if _, err := h.admin.AnswerInboxItem(h.adm, &hubv1.AnswerInboxItemRequest{Id: it.GetId(), Decision: "deny", Message: "not today"}); err != nil {
		t.Fatal(err)
	}
	r := replyOf(t, st, 1).GetRequestApproval()
	if got := r.GetItem(); r.GetTimedOut() || got.GetId() != it.GetId() || got.GetDecision() != "deny" || got.GetAnswer() != "not today" {
		t.Fatalf("the reply to the approval answered = %v, want the item denied with the message", r)
	}

	ask(2)
	it = openItem()
	if err := st.Send(&hubv1.SubscribeRequest{CancelId: 2}); err != nil {
		t.Fatal(err)
	}
	if r := replyOf(t, st, 2).GetRequestApproval(); !r.GetTimedOut() || r.GetItem().GetId() != it.GetId() || r.GetItem().GetState() != "expired" {
		t.Fatalf("the reply to the approval ended by its caller = %v, want it timed out, the item expired", r)
	}
	r2, err := h.admin.ListInbox(h.adm, &hubv1.ListInboxRequest{State: "expired"})
	if err != nil {
		t.Fatal(err)
	}
	if items := r2.GetItems(); len(items) != 1 || items[0].GetId() != it.GetId() {
		t.Fatalf("the expired items once the call ended = %v, want approval %s (left to the terminal)", items, it.GetId())
	}

	_, metrics, _ := h.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`hub_rpcs_total{code="OK",method="RequestApproval",service="AgentService"} 2`,
		`hub_stream_calls_total{code="OK",method="RequestApproval",service="AgentService"} 2`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics has no line %q", want)
		}
	}
}
