package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
)

// TestToolUseWithSomethingNewPrintsTheBridgesAnswer: the bridge took the
// injection from the hub and hands hub-hook its output (AnswerPrint):
// hub-hook prints it as it is, exits with its status without running the
// hub, and tells the bridge it printed it (Synced), so that the bridge
// confirms the messages shown. The query says the hook takes a printed
// answer, for its host.
func TestToolUseWithSomethingNewPrintsTheBridgesAnswer(t *testing.T) {
	r := newRig(t, true)
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const out = `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"[12] alice: the build is green"}}` + "\n"
	queries := make(chan hooksock.Query, 10)
	printed := make(chan struct{}, 10)
	go hooksock.Serve(ln, "tok-ann", func(_ context.Context, q hooksock.Query) (hooksock.Reply, func()) {
		queries <- q
		return hooksock.Reply{Answer: hooksock.AnswerPrint, Output: out, Exit: 0}, func() { printed <- struct{}{} }
	}, slog.New(slog.DiscardHandler))

	code, stdout, stderr := r.run(t, "", postToolUse, "hook", "gemini", "AfterTool")
	if hub := r.handedOff(t); code != 0 || stdout != out || stderr != "" || hub != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q, the hub got %q; want 0, the bridge's output, nothing on stderr and no hub", code, stdout, stderr, hub)
	}
	if q := <-queries; !q.Print || q.Host != "gemini" || q.Step != hooksock.StepInject || q.Event != "AfterTool" {
		t.Errorf("the hook asked %+v; want a printed answer for gemini's AfterTool", q)
	}
	select {
	case <-printed:
	case <-time.After(10 * time.Second):
		t.Error("hub-hook did not tell the bridge it printed the answer")
	}
}

// TestHostEventsGiveTheBridgeTheirNote: hub-hook reads the host's input
// and hands the bridge what the run reports to the hub (Query.Note): a
// notification that the agent waits for a person, in the host's words,
// which a bridge that reports it answers (AnswerPrint) without the hub; a
// tool use, that the agent works again and which call ran. A bridge that
// does not know notes (an older one) sends the run to the hub, which gets
// the host's input whole. A notification that asks nothing of a person
// reports nothing and is answered here.
func TestHostEventsGiveTheBridgeTheirNote(t *testing.T) {
	r := newRig(t, true)
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	queries := make(chan hooksock.Query, 10)
	var older atomic.Bool
	go hooksock.Serve(ln, "tok-ann", func(_ context.Context, q hooksock.Query) (hooksock.Reply, func()) {
		queries <- q
		if older.Load() || q.Note == nil {
			return hooksock.Reply{Answer: hooksock.AnswerHub}, nil
		}
		return hooksock.Reply{Answer: hooksock.AnswerPrint}, nil
	}, slog.New(slog.DiscardHandler))

	const idle = `{"hook_event_name":"Notification","session_id":"s1","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`
	code, stdout, stderr := r.run(t, "", idle, "hook", "claude", "Notification")
	if hub := r.handedOff(t); code != 0 || stdout != "" || stderr != "" || hub != "" {
		t.Errorf("a notification the bridge reports: exit %d, stdout %q, stderr %q, the hub got %q; want 0, nothing and no hub", code, stdout, stderr, hub)
	}
	want := hooksock.Note{Event: "needs_input", Text: "Claude is waiting for your input"}
	if q := <-queries; !q.Print || q.Host != "claude" || q.Step != hooksock.StepOther || q.Note == nil || *q.Note != want {
		t.Errorf("the notification's hook asked %+v (note %+v); want a printed answer for claude with the note %+v", q, q.Note, want)
	}

	r.run(t, "", postToolUse, "hook", "claude", "PostToolUse")
	if q := <-queries; q.Note == nil || q.Note.Event != "tool_ran" || len(q.Note.CallKey) != 32 {
		t.Errorf("the tool use's hook gave the note %+v; want tool_ran with the call's key", q.Note)
	}

	older.Store(true)
	code, stdout, _ = r.run(t, "", idle, "hook", "claude", "Notification")
	if got, want := r.handedOff(t), "hook claude Notification\n"+idle; code != 0 || stdout != "{}\n" || got != want {
		t.Errorf("a bridge that sends the notification to the hub: exit %d, stdout %q, the hub got %q; want the hub run with %q", code, stdout, got, want)
	}
	<-queries

	const signedIn = `{"hook_event_name":"Notification","notification_type":"auth_success","message":"signed in"}`
	code, stdout, stderr = r.run(t, "", signedIn, "hook", "claude", "Notification")
	if hub := r.handedOff(t); code != 0 || stdout != "" || stderr != "" || hub != "" || len(queries) != 0 {
		t.Errorf("a notification that asks nothing: exit %d, stdout %q, stderr %q, the hub got %q, the bridge asked %d times; want 0, nothing, no hub, no bridge", code, stdout, stderr, hub, len(queries))
	}
}

// TestStopAndSessionEndGiveTheBridgeTheirQuestion: hub-hook reads the
// host's input of a stop and hands the bridge the stop's question
// (Query.Stop: whether the host goes on after a held stop), and a session's
// end says so (Query.End); a bridge that asks the hub on its stream
// answers them (AnswerPrint: hub-hook prints the held stop's decision as
// it is, without the hub). A bridge that does not know them (an older
// one) sends the run to the hub, which gets the host's input whole.
func TestStopAndSessionEndGiveTheBridgeTheirQuestion(t *testing.T) {
	r := newRig(t, true)
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const held = `{"decision":"block","reason":"Agent Hub: 1 message for you from other agents (not from the user) is unread"}` + "\n"
	queries := make(chan hooksock.Query, 10)
	var older atomic.Bool
	go hooksock.Serve(ln, "tok-ann", func(_ context.Context, q hooksock.Query) (hooksock.Reply, func()) {
		queries <- q
		switch {
		case older.Load(), q.Stop == nil && !q.End:
			return hooksock.Reply{Answer: hooksock.AnswerHub}, nil
		case q.Stop != nil:
			return hooksock.Reply{Answer: hooksock.AnswerPrint, Output: held}, nil
		}
		return hooksock.Reply{Answer: hooksock.AnswerPrint}, nil
	}, slog.New(slog.DiscardHandler))
	asked := func() hooksock.Query {
		t.Helper()
		select {
		case q := <-queries:
			return q
		case <-time.After(10 * time.Second):
			t.Fatal("hub-hook did not ask the bridge")
			return hooksock.Query{}
		}
	}

	const stop = `{"hook_event_name":"Stop","session_id":"s1","stop_hook_active":true}`
	code, stdout, stderr := r.run(t, "", stop, "hook", "claude", "Stop")
	if hub := r.handedOff(t); code != 0 || stdout != held || stderr != "" || hub != "" {
		t.Errorf("a stop the bridge answers: exit %d, stdout %q, stderr %q, the hub got %q; want 0, the bridge's output and no hub", code, stdout, stderr, hub)
	}
	if q := asked(); !q.Print || q.Host != "claude" || q.Step != hooksock.StepOther || q.Stop == nil || !q.Stop.Continuing || q.Note != nil || q.End {
		t.Errorf("the stop's hook asked %+v (stop %+v); want a printed answer for claude with the stop, continuing", q, q.Stop)
	}

	const end = `{"hook_event_name":"SessionEnd","session_id":"s1","reason":"exit"}`
	code, stdout, stderr = r.run(t, "", end, "hook", "codex", "SessionEnd")
	if hub := r.handedOff(t); code != 0 || stdout != "" || stderr != "" || hub != "" {
		t.Errorf("a session's end the bridge answers: exit %d, stdout %q, stderr %q, the hub got %q; want 0, nothing and no hub", code, stdout, stderr, hub)
	}
	if q := asked(); !q.Print || q.Host != "codex" || !q.End || q.Stop != nil || q.Note != nil {
		t.Errorf("the session end's hook asked %+v; want a printed answer for codex with the end", q)
	}

	older.Store(true)
	for _, c := range []struct{ event, input string }{{"Stop", stop}, {"SessionEnd", end}} {
		code, stdout, _ = r.run(t, "", c.input, "hook", "claude", c.event)
		if got, want := r.handedOff(t), "hook claude "+c.event+"\n"+c.input; code != 0 || stdout != "{}\n" || got != want {
			t.Errorf("a bridge that sends the %s to the hub: exit %d, stdout %q, the hub got %q; want the hub run with %q", c.event, code, stdout, got, want)
		}
		asked()
	}
}

// TestPermissionRequestGivesTheBridgeItsApproval: hub-hook reads the
// host's permission request and hands the bridge the approval to ask
// (Query.Approval: the tool, its input as the host gave it, the call's
// key, the host's suggested rule and the wait for a person), then prints
// the decision the bridge gives, without the hub. A bridge that does not
// know approvals (an older one) sends the run to the hub, which gets the
// host's input whole; so does a request for one of the hub's own tools
// (allowed there at once) and a request not relayed (--approval-wait 0).
func TestPermissionRequestGivesTheBridgeItsApproval(t *testing.T) {
	r := newRig(t, true)
	ln, err := hooksock.Listen(filepath.Join(r.dir, "agent-hub", filepath.Base(hooksock.Path("127.0.0.1:9", "tok-ann"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const allowed = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"
	queries := make(chan hooksock.Query, 10)
	var older atomic.Bool
	go hooksock.Serve(ln, "tok-ann", func(_ context.Context, q hooksock.Query) (hooksock.Reply, func()) {
		queries <- q
		if older.Load() || q.Approval == nil {
			return hooksock.Reply{Answer: hooksock.AnswerHub}, nil
		}
		return hooksock.Reply{Answer: hooksock.AnswerPrint, Output: allowed}, nil
	}, slog.New(slog.DiscardHandler))

	const request = `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash","tool_input":{"command":"go test ./...", "description":"Run the tests"},` +
		`"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"go test:*"}],"behavior":"allow"}]}`
	code, stdout, stderr := r.run(t, "", request, "hook", "claude", "PermissionRequest", "--approval-wait", "90s")
	if hub := r.handedOff(t); code != 0 || stdout != allowed || stderr != "" || hub != "" {
		t.Errorf("a permission request the bridge answers: exit %d, stdout %q, stderr %q, the hub got %q; want 0, the bridge's decision and no hub", code, stdout, stderr, hub)
	}
	q := <-queries
	want := hooksock.Approval{Tool: "Bash", Input: `{"command":"go test ./...", "description":"Run the tests"}`, SuggestedRule: "go test:*", WaitSeconds: 90}
	if a := q.Approval; !q.Print || q.Host != "claude" || q.Step != hooksock.StepOther || a == nil || len(a.CallKey) != 32 {
		t.Fatalf("the permission request's hook asked %+v (approval %+v); want a printed answer for claude with the approval and the call's key", q, a)
	}
	got := *q.Approval
	got.CallKey = ""
	if got != want {
		t.Errorf("the approval asked = %+v, want %+v", got, want)
	}

	older.Store(true)
	code, stdout, _ = r.run(t, "", request, "hook", "claude", "PermissionRequest")
	if got, want := r.handedOff(t), "hook claude PermissionRequest\n"+request; code != 0 || stdout != "{}\n" || got != want {
		t.Errorf("a bridge that sends the permission request to the hub: exit %d, stdout %q, the hub got %q; want the hub run with %q", code, stdout, got, want)
	}
	<-queries

	const own = `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"mcp__hub__send_message","tool_input":{"to":["bob"]}}`
	for _, c := range []struct{ input, wait string }{{own, "60s"}, {request, "0"}} {
		code, stdout, _ = r.run(t, "", c.input, "hook", "claude", "PermissionRequest", "--approval-wait", c.wait)
		if got := r.handedOff(t); code != 0 || stdout != "{}\n" || !strings.HasPrefix(got, "hook claude PermissionRequest") {
			t.Errorf("%s with --approval-wait %s: exit %d, stdout %q, the hub got %q; want the hub run", c.input, c.wait, code, stdout, got)
		}
	}
	if len(queries) != 0 {
		t.Errorf("the bridge was asked %d times about requests the hub answers alone, want none", len(queries))
	}
}
