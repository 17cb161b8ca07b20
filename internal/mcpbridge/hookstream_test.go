package mcpbridge_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hook"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// With hub mcp holding its stream, a hook run costs the hub no call of its
// own, hence no connection: a tool use after a message gets the message
// from the bridge, which took the injection on its stream and handed the
// hook its output; the hook prints it, and the bridge confirms it on the
// stream (IN_CONTEXT via hook). With nothing new the bridge answers alone.
func TestBridgeTakesItsHooksInjectionOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	addr, web := h.GRPCAddress(), h.HTTPAddress()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	bob := h.createAgent(t, "bob")
	rt, err := os.MkdirTemp("", "hb") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	sock := filepath.Join(rt, "agent-hub", "bob.sock")
	bridgeOver(t, addr, bob, mcpbridge.Options{HookSocket: sock, HookOutput: hook.Output}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream", func() bool { return h.parkedWaiters(t) == 1 })
	// hook runs bob's hook of a tool use as hub-hook does, and reports
	// whether the bridge answered it, and what it printed.
	hook := func() (string, bool) {
		var out bytes.Buffer
		exit, ok, _ := hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "PostToolUse",
			strings.NewReader(`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}`), &out,
			hooklocal.Options{Addr: addr, Token: bob, Socket: sock})
		if exit != 0 {
			t.Errorf("the hook exits %d, want 0", exit)
		}
		return out.String(), ok
	}

	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	alone, carried := rpcCounts(t, web, "")
	receipts := rpcCount(t, web, "GetMessageReceipts") // the test's own
	var out string
	eventuallyTrue(t, 10*time.Second, "a hook that shows the message", func() bool {
		o, ok := hook()
		if !ok {
			t.Fatalf("the bridge sent a tool use's hook to the hub; printed %q", o)
		}
		out += o
		return strings.Contains(o, "the build is green")
	})
	if !strings.Contains(out, `"hookEventName":"PostToolUse"`) || !strings.Contains(out, "["+id+"]") {
		t.Errorf("the hook printed %q, want the host's additional context with message %s", out, id)
	}
	eventuallyTrue(t, 10*time.Second, "the message in bob's context via hook", func() bool {
		r := h.receipt(t, id, "bob")
		return r.GetState() == "IN_CONTEXT" && r.GetVia() == "hook"
	})
	if a, c := rpcCounts(t, web, ""); a-(rpcCount(t, web, "GetMessageReceipts")-receipts) != alone || c <= carried {
		t.Errorf("the hub answered %d calls of their own (the test's reads of receipts among them) and %d carried by streams during the hooks, want none of their own and some carried", a-alone, c-carried)
	}
	if a, c := rpcCounts(t, web, "TakeInjection"); a != 0 || c == 0 {
		t.Errorf("TakeInjection: %d calls of their own, %d carried; want 0 and some", a, c)
	}
	if a, c := rpcCounts(t, web, "ConfirmDelivery"); a != 0 || c != 1 {
		t.Errorf("ConfirmDelivery: %d calls of their own, %d carried; want 0 and 1", a, c)
	}

	// Nothing new: the bridge answers alone, and the hub answers nothing.
	eventuallyTrue(t, 10*time.Second, "a hook with nothing new answered by the bridge alone", func() bool {
		alone, carried := rpcCounts(t, web, "")
		o, ok := hook()
		a, c := rpcCounts(t, web, "")
		return ok && o == "" && a == alone && c == carried
	})
}

// With hub mcp holding its stream, the hooks of a host's events cost the
// hub no call of their own either: a notification that the agent waits
// for a person is reported by the bridge on its stream (the person's inbox
// shows it), and the next prompt, after a message arrived, reports that
// the agent works again and takes the injection there too, with the
// output hub hook would print; the hook's code (hooklocal.Answered, as
// hub-hook runs it) only prints.
func TestBridgeReportsItsHooksHostEventsOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	addr, web := h.GRPCAddress(), h.HTTPAddress()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	bob := h.createAgent(t, "bob")
	sock := hookSocket(t)
	bridgeOver(t, addr, bob, mcpbridge.Options{HookSocket: sock, HookOutput: hook.Output}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream", func() bool { return h.parkedWaiters(t) == 1 })
	run := func(event, input string) string {
		t.Helper()
		var out bytes.Buffer
		exit, ok, _ := hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], event, strings.NewReader(input), &out,
			hooklocal.Options{Addr: addr, Token: bob, Socket: sock})
		if !ok || exit != 0 {
			t.Fatalf("%s: answered %v, exit %d, printed %q; want the bridge's answer, exit 0", event, ok, exit, out.String())
		}
		return out.String()
	}
	openItems := func() []string {
		t.Helper()
		r, err := h.admin.ListInbox(h.adminCtx(), &hubv1.ListInboxRequest{State: "open"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range r.GetItems() {
			out = append(out, it.GetAgent()+" "+it.GetKind()+" "+it.GetTitle())
		}
		return out
	}

	alone, carried := rpcCounts(t, web, "")
	if out := run("Notification", `{"session_id":"s1","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`); out != "" {
		t.Errorf("the notification printed %q, want nothing (Claude Code's quiet answer)", out)
	}
	if a, c := rpcCounts(t, web, ""); a != alone || c != carried+1 {
		t.Errorf("during the notification the hub answered %d calls of their own and %d carried, want none and 1", a-alone, c-carried)
	}
	if got, want := openItems(), []string{"bob needs_input Claude is waiting for your input"}; !slices.Equal(got, want) {
		t.Errorf("the open inbox after the notification = %q, want %q", got, want)
	}

	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	alone, carried = rpcCounts(t, web, "")
	receipts := rpcCount(t, web, "GetMessageReceipts") // the test's own
	out := run("UserPromptSubmit", `{"session_id":"s1","prompt":"go on"}`)
	if !strings.Contains(out, `"hookEventName":"UserPromptSubmit"`) || !strings.Contains(out, "["+id+"]") || !strings.Contains(out, "the build is green") {
		t.Errorf("the prompt printed %q, want the host's additional context with message %s", out, id)
	}
	eventuallyTrue(t, 10*time.Second, "the message in bob's context via hook", func() bool {
		return h.receipt(t, id, "bob").GetState() == "IN_CONTEXT"
	})
	// The prompt's note, its injection, its confirmation.
	if a, c := rpcCounts(t, web, ""); a-(rpcCount(t, web, "GetMessageReceipts")-receipts) != alone || c != carried+3 {
		t.Errorf("during the prompt the hub answered %d calls of their own (the test's reads of the receipt among them) and %d carried, want none and 3", a-alone, c-carried)
	}
	if got := openItems(); len(got) != 0 {
		t.Errorf("the open inbox once bob works again = %q, want nothing", got)
	}
	if a, c := rpcCounts(t, web, "NoteHostEvent"); a != 0 || c != 2 {
		t.Errorf("NoteHostEvent: %d calls of their own, %d carried; want 0 and 2", a, c)
	}

	// The event cleared, nothing new: the bridge answers alone.
	eventuallyTrue(t, 10*time.Second, "a prompt with nothing new answered by the bridge alone", func() bool {
		alone, carried := rpcCounts(t, web, "")
		o := run("UserPromptSubmit", `{"session_id":"s1","prompt":"and then"}`)
		a, c := rpcCounts(t, web, "")
		return o == "" && a == alone && c == carried
	})
}

// With hub mcp holding its stream, a stop and a session's end cost the hub
// no call of their own either: the bridge makes the calls hub hook would,
// in its order, on its stream, and hands the hook hub hook's output. A stop
// with nothing unread is let go (CheckStop), and the agent waits for a
// person (NoteHostEvent: the inbox shows it); one with a direct message
// unread is held, the hook printing the host's decision and the message,
// which the bridge then confirms (IN_CONTEXT via hook); a session's end
// is its note and EndSession.
func TestBridgeAnswersItsHooksStopAndSessionEndOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	addr, web := h.GRPCAddress(), h.HTTPAddress()
	alice := newPoster(t, addr, h.createAgent(t, "alice"))
	bob := h.createAgent(t, "bob")
	sock := hookSocket(t)
	bridgeOver(t, addr, bob, mcpbridge.Options{HookSocket: sock, HookOutput: hook.Output}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream", func() bool { return h.parkedWaiters(t) == 1 })
	run := func(host, event, input string) string {
		t.Helper()
		var out bytes.Buffer
		exit, ok, _ := hooklocal.Answered(context.Background(), hooklocal.Hosts[host], event, strings.NewReader(input), &out,
			hooklocal.Options{Addr: addr, Token: bob, Socket: sock})
		if !ok || exit != 0 {
			t.Fatalf("%s %s: answered %v, exit %d, printed %q; want the bridge's answer, exit 0", host, event, ok, exit, out.String())
		}
		return out.String()
	}
	// calls says how many calls of each method the hub answered since
	// the last time, as calls of their own and carried.
	methods := []string{"CheckStop", "NoteHostEvent", "ConfirmDelivery", "EndSession", "TakeInjection"}
	last := map[string][2]int64{}
	calls := func() string {
		var parts []string
		for _, m := range methods {
			a, c := rpcCounts(t, web, m)
			if d := [2]int64{a - last[m][0], c - last[m][1]}; d != [2]int64{} {
				parts = append(parts, fmt.Sprintf("%s %d+%d", m, d[0], d[1]))
			}
			last[m] = [2]int64{a, c}
		}
		return strings.Join(parts, ", ")
	}
	calls()

	if out := run("claude", "Stop", `{"session_id":"s1","stop_hook_active":false}`); out != "" {
		t.Errorf("a stop with nothing unread printed %q, want nothing (Claude Code's quiet answer)", out)
	}
	if got, want := calls(), "CheckStop 0+1, NoteHostEvent 0+1"; got != want {
		t.Errorf("the stop let go: the hub answered %q (alone+carried), want %q", got, want)
	}
	r, err := h.admin.ListInbox(h.adminCtx(), &hubv1.ListInboxRequest{State: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if items := r.GetItems(); len(items) != 1 || items[0].GetAgent() != "bob" || items[0].GetKind() != "needs_input" || items[0].GetTitle() != hub.TurnEnded {
		t.Errorf("the open inbox after the stop = %v, want bob's needs_input %q", items, hub.TurnEnded)
	}

	id := alice.post(t, &hubv1.PostMessageRequest{To: []string{"bob"}, Body: "the build is green"})
	out := run("gemini", "AfterAgent", `{"session_id":"s1","stop_hook_active":false}`)
	if !strings.HasPrefix(out, `{"decision":"deny","reason":"Agent Hub: 1 message for you`) || !strings.Contains(out, "["+id+"]") || !strings.Contains(out, "the build is green") {
		t.Errorf("a stop with a message unread printed %q, want Gemini CLI's deny naming message %s", out, id)
	}
	eventuallyTrue(t, 10*time.Second, "the message in bob's context via hook", func() bool {
		r := h.receipt(t, id, "bob")
		return r.GetState() == "IN_CONTEXT" && r.GetVia() == "hook"
	})
	if got, want := calls(), "CheckStop 0+1, ConfirmDelivery 0+1"; got != want {
		t.Errorf("the stop held: the hub answered %q (alone+carried), want %q", got, want)
	}

	if out := run("gemini", "SessionEnd", `{"session_id":"s1","reason":"exit"}`); out != "{}\n" {
		t.Errorf("the session's end printed %q, want Gemini CLI's quiet {}", out)
	}
	if got, want := calls(), "NoteHostEvent 0+1, EndSession 0+1"; got != want {
		t.Errorf("the session's end: the hub answered %q (alone+carried), want %q", got, want)
	}
}

// hookSocket returns the path of a hook socket in a new directory.
func hookSocket(t *testing.T) string {
	t.Helper()
	rt, err := os.MkdirTemp("", "hb") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	return filepath.Join(rt, "agent-hub", "bob.sock")
}

// Against a hub whose stream does not take note_host_event (it lists only
// the injection's calls), the bridge still answers its agent's
// notification hook: it reports the event as a call of its own, on its
// connection, and never sends the hub a call its stream does not take; so
// does it a stop's, a session end's and a permission request's calls. A
// call the hub refuses sends the hook to the hub.
func TestBridgeReportsHostEventsAloneToAHubWithoutTheCall(t *testing.T) {
	t.Parallel()
	past := &injectionOnlyHub{framed: make(chan struct{})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hubv1.RegisterAgentServiceServer(srv, past)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	sock := hookSocket(t)
	bridgeOver(t, l.Addr().String(), "tok", mcpbridge.Options{HookSocket: sock, HookOutput: hook.Output}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	select {
	case <-past.framed:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge opened no stream")
	}
	var out bytes.Buffer
	exit, ok, _ := hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "Notification",
		strings.NewReader(`{"notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`), &out,
		hooklocal.Options{Addr: l.Addr().String(), Token: "tok", Socket: sock})
	if !ok || exit != 0 || out.String() != "" {
		t.Fatalf("the notification: answered %v, exit %d, printed %q; want the bridge's quiet answer", ok, exit, out.String())
	}
	if got := past.noted(); got != "needs_input Claude needs your permission to use Bash" {
		t.Errorf("the hub was told %q as a call of its own, want the notification's needs_input", got)
	}
	if n := past.ended.Load(); n != 0 {
		t.Errorf("the hub ended %d streams for a call it does not take, want none", n)
	}

	// The hub refuses the report: the bridge does not answer for it, and
	// the hook goes to the hub with the host's input whole, to meet the
	// same refusal and say so as hub hook does.
	const refused = `{"notification_type":"idle_prompt","message":"refuse this"}`
	out.Reset()
	exit, ok, read := hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "Notification",
		strings.NewReader(refused), &out, hooklocal.Options{Addr: l.Addr().String(), Token: "tok", Socket: sock})
	if ok || exit != 0 || out.String() != "" || string(read) != refused {
		t.Errorf("a notification the hub refuses: answered %v, exit %d, printed %q, read %q; want the hook sent to the hub with the input %q", ok, exit, out.String(), read, refused)
	}

	// A stop: its check, then the note that the turn ended, as calls of
	// their own. A session's end the hub refuses sends the hook there.
	out.Reset()
	exit, ok, _ = hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "Stop",
		strings.NewReader(`{"stop_hook_active":false}`), &out, hooklocal.Options{Addr: l.Addr().String(), Token: "tok", Socket: sock})
	if !ok || exit != 0 || out.String() != "" {
		t.Errorf("the stop: answered %v, exit %d, printed %q; want the bridge's quiet answer", ok, exit, out.String())
	}
	if got, want := past.noted(), "needs_input Claude needs your permission to use Bash; check stop; needs_input "+hub.TurnEnded; got != want {
		t.Errorf("the hub was told %q as calls of their own, want %q", got, want)
	}
	const end = `{"session_id":"s1","reason":"exit"}`
	out.Reset()
	exit, ok, read = hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "SessionEnd",
		strings.NewReader(end), &out, hooklocal.Options{Addr: l.Addr().String(), Token: "tok", Socket: sock})
	if ok || exit != 0 || out.String() != "" || string(read) != end {
		t.Errorf("a session's end the hub refuses: answered %v, exit %d, printed %q, read %q; want the hook sent to the hub with the input %q", ok, exit, out.String(), read, end)
	}

	// A permission request: its approval as a call of its own, whose
	// decision the hook prints.
	out.Reset()
	exit, ok, _ = hooklocal.Answered(context.Background(), hooklocal.Hosts["claude"], "PermissionRequest",
		strings.NewReader(permissionRequest), &out, hooklocal.Options{Addr: l.Addr().String(), Token: "tok", Socket: sock, ApprovalWait: time.Minute})
	if !ok || exit != 0 || !strings.Contains(out.String(), `"behavior":"allow"`) || !strings.HasSuffix(past.noted(), "; approval Bash") {
		t.Errorf("the permission request: answered %v, exit %d, printed %q, the hub was told %q; want the approval as a call of its own and its allow printed", ok, exit, out.String(), past.noted())
	}
	if n := past.ended.Load(); n != 0 {
		t.Errorf("the hub ended %d streams for a call it does not take, want none", n)
	}
}

// injectionOnlyHub is a hub from before streams carried host events: its
// first frame lists the injection's calls only, it ends a stream that
// carries another, and it records the NoteHostEvent calls it answers.
type injectionOnlyHub struct {
	hubv1.UnimplementedAgentServiceServer
	framed chan struct{}
	once   sync.Once
	ended  atomic.Int32
	mu     sync.Mutex
	notes  []string
}

func (p *injectionOnlyHub) Subscribe(ss grpc.BidiStreamingServer[hubv1.SubscribeRequest, hubv1.SubscribeFrame]) error {
	if _, err := ss.Recv(); err != nil {
		return err
	}
	err := ss.Send(&hubv1.SubscribeFrame{Cursor: "0", Status: &hubv1.Status{}, Calls: true, MoreCalls: []string{"take_injection", "confirm_delivery"}})
	p.once.Do(func() { close(p.framed) })
	if err != nil {
		return err
	}
	for {
		req, err := ss.Recv()
		if err != nil {
			return nil
		}
		if c := req.GetCall(); c.GetNoteHostEvent() != nil || c.GetCheckStop() != nil || c.GetEndSession() != nil || c.GetRequestApproval() != nil {
			p.ended.Add(1)
			return status.Error(codes.InvalidArgument, "a call this stream does not take")
		}
	}
}

func (p *injectionOnlyHub) WaitForMessages(ctx context.Context, _ *hubv1.WaitForMessagesRequest) (*hubv1.WaitForMessagesResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (p *injectionOnlyHub) NoteHostEvent(_ context.Context, req *hubv1.NoteHostEventRequest) (*hubv1.NoteHostEventResponse, error) {
	if req.GetText() == "refuse this" {
		return nil, status.Error(codes.InvalidArgument, "refused")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, req.GetEvent()+" "+req.GetText())
	return &hubv1.NoteHostEventResponse{}, nil
}

func (p *injectionOnlyHub) CheckStop(context.Context, *hubv1.CheckStopRequest) (*hubv1.CheckStopResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, "check stop")
	return &hubv1.CheckStopResponse{}, nil
}

func (p *injectionOnlyHub) EndSession(context.Context, *hubv1.EndSessionRequest) (*hubv1.EndSessionResponse, error) {
	return nil, status.Error(codes.InvalidArgument, "refused")
}

// RequestApproval allows at once, as a person would.
func (p *injectionOnlyHub) RequestApproval(_ context.Context, req *hubv1.RequestApprovalRequest) (*hubv1.RequestApprovalResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, "approval "+req.GetTool())
	return &hubv1.RequestApprovalResponse{Item: &hubv1.InboxItem{Kind: "approval", State: "answered", Tool: req.GetTool(), Decision: "allow", AnsweredBy: "ann"}}, nil
}

func (p *injectionOnlyHub) noted() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.notes, "; ")
}

// permissionRequest is Claude Code's PermissionRequest hook input for a
// Bash call, with the rule it suggests.
const permissionRequest = `{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run the tests"},` +
	`"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"go test:*"}],"behavior":"allow","destination":"localSettings"}]}`

// With hub mcp holding its stream, a permission request costs the hub no
// call of its own either: the bridge makes the hook's RequestApproval on
// its stream, the approval waits in the people's inbox (with the host's
// suggested rule), and the person's decision reaches the host as the hook
// alone (hub hook, asking the hub) prints it, allow or deny; the hook's
// code (hooklocal.Answered, as hub-hook runs it, and hub hook's own) only
// prints. The stream
// carries two at once; a third is a call of the bridge's own. A hook that
// goes while it waits (its host killed it, or it gave up) ends the call
// there: the approval is left to the terminal at once.
func TestBridgeAsksItsHooksApprovalOnItsStream(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	addr, web := h.GRPCAddress(), h.HTTPAddress()
	bob := h.createAgent(t, "bob")
	sock := hookSocket(t)
	bridgeOver(t, addr, bob, mcpbridge.Options{HookSocket: sock, HookOutput: hook.Output}, nil,
		func(t mcp.Transport) mcp.Transport { return t }, legacyHandshake)
	eventuallyTrue(t, 10*time.Second, "the bridge's watch stream", func() bool { return h.parkedWaiters(t) == 1 })
	o := hooklocal.Options{Addr: addr, Token: bob, Socket: sock, ApprovalWait: time.Minute}
	type run struct {
		out  string
		exit int
		ok   bool
	}
	// ask runs the permission request's hook as hub-hook does until ctx
	// ends, or as hub hook does (hub), without a bridge (direct) or with.
	ask := func(ctx context.Context, hub, direct bool) chan run {
		done := make(chan run, 1)
		go func() {
			var out bytes.Buffer
			if hub {
				ho := o
				if direct {
					ho.Socket = ""
				}
				hook.Run(ctx, hooklocal.Hosts["claude"], "PermissionRequest", strings.NewReader(permissionRequest), &out, io.Discard, ho)
				done <- run{out: out.String(), ok: true}
				return
			}
			exit, ok, _ := hooklocal.Answered(ctx, hooklocal.Hosts["claude"], "PermissionRequest", strings.NewReader(permissionRequest), &out, o)
			done <- run{out.String(), exit, ok}
		}()
		return done
	}
	openApproval := func() *hubv1.InboxItem {
		t.Helper()
		var it *hubv1.InboxItem
		eventuallyTrue(t, 10*time.Second, "an open approval", func() bool {
			r, err := h.admin.ListInbox(h.adminCtx(), &hubv1.ListInboxRequest{State: "open"})
			if err != nil {
				t.Fatal(err)
			}
			if items := r.GetItems(); len(items) == 1 {
				it = items[0]
			}
			return it != nil
		})
		return it
	}
	// hookCalls is the hub's count of AgentService calls of their own
	// (the test's are the admin's), and the RequestApproval calls carried.
	hookCalls := func() (alone, carried int64) {
		alone, _ = rpcCounts(t, web, "")
		for _, m := range []string{"ListInbox", "AnswerInboxItem", "GetHubInfo"} { // the test's own
			a, _ := rpcCounts(t, web, m)
			alone -= a
		}
		_, carried = rpcCounts(t, web, "RequestApproval")
		return alone, carried
	}

	for _, c := range []struct{ decision, message string }{{"allow", ""}, {"deny", "not on the shared runner"}} {
		decide := func() {
			it := openApproval()
			if it.GetKind() != "approval" || it.GetAgent() != "bob" || it.GetTool() != "Bash" || it.GetSuggestedRule() != "go test:*" ||
				!strings.Contains(it.GetBody(), `"go test ./..."`) {
				t.Fatalf("the open item = %v, want bob's Bash approval with its input and the host's rule", it)
			}
			if _, err := h.admin.AnswerInboxItem(h.adminCtx(), &hubv1.AnswerInboxItemRequest{Id: it.GetId(), Decision: c.decision, Message: c.message}); err != nil {
				t.Fatal(err)
			}
		}
		alone, carried := hookCalls()
		bridged := ask(context.Background(), false, false)
		decide()
		got := <-bridged
		hubBridged := ask(context.Background(), true, false)
		decide()
		gotHub := <-hubBridged
		if a, c := hookCalls(); a != alone || c != carried+2 {
			t.Errorf("%s through the bridge (hub-hook's code, then hub hook's): the hub answered %d calls of their own and %d approvals carried, want none and 2", got.out, a-alone, c-carried)
		}
		direct := ask(context.Background(), true, true)
		decide()
		want := <-direct
		if !got.ok || got.exit != 0 || got.out != want.out || gotHub.out != want.out || !strings.Contains(got.out, `"behavior":"`+c.decision+`"`) || !strings.Contains(got.out, c.message) {
			t.Errorf("%s through the bridge: answered %v, exit %d, printed %q (hub hook %q); want exit 0 and what hub hook prints asking the hub, %q", c.decision, got.ok, got.exit, got.out, gotHub.out, want.out)
		}
	}

	// Three at once: the stream carries two, and leaves room for the
	// agent's waits and other hooks; the third is a call of the bridge's own.
	alone, carried := hookCalls()
	var runs []chan run
	for range 3 {
		runs = append(runs, ask(context.Background(), false, false))
	}
	eventuallyTrue(t, 10*time.Second, "three open approvals", func() bool {
		r, err := h.admin.ListInbox(h.adminCtx(), &hubv1.ListInboxRequest{State: "open"})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetItems()) < 3 {
			return false
		}
		for _, it := range r.GetItems() {
			if _, err := h.admin.AnswerInboxItem(h.adminCtx(), &hubv1.AnswerInboxItemRequest{Id: it.GetId(), Decision: "allow"}); err != nil {
				t.Fatal(err)
			}
		}
		return true
	})
	for _, r := range runs {
		if got := <-r; !got.ok || !strings.Contains(got.out, `"behavior":"allow"`) {
			t.Errorf("one of three at once: answered %v, printed %q; want the allow", got.ok, got.out)
		}
	}
	if a, c := hookCalls(); a != alone+1 || c != carried+2 {
		t.Errorf("three at once: the hub answered %d calls of their own and %d approvals carried, want 1 and 2", a-alone, c-carried)
	}

	ctx, cancel := context.WithCancel(context.Background())
	gone := ask(ctx, false, false)
	it := openApproval()
	cancel()
	<-gone
	eventuallyTrue(t, 10*time.Second, "the approval of the hook gone left to the terminal", func() bool {
		r, err := h.admin.ListInbox(h.adminCtx(), &hubv1.ListInboxRequest{State: "expired"})
		if err != nil {
			t.Fatal(err)
		}
		items := r.GetItems()
		return len(items) == 1 && items[0].GetId() == it.GetId()
	})
}
