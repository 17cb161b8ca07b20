// Package hook is `hub hook HOST EVENT`: the command an agent host (Claude
// Code, Gemini CLI, Codex) runs at points of its loop, so that messages,
// nudges and pulses reach an agent that is working or sitting at its
// prompt rather than parked in wait_for_messages.
//
// The hook reads the host's JSON on stdin and asks the hub, as the agent
// of HUB_TOKEN, over gRPC:
//
//   - session start: a few lines on who the agent is, unread counts and
//     deep work (GetStatus);
//   - prompt submitted, tool used: the messages new since the last
//     injection, as additional context (TakeInjection: the cursor lives in
//     the hub, so nothing is injected twice, whichever process asks);
//   - stop: held while direct messages or mentions are unread, a few times
//     in a row at most (CheckStop); let go, the agent is marked waiting
//     for a person until its next prompt or tool use (NoteHostEvent);
//   - permission request (Claude Code, Codex): the tool call goes to the
//     people's inbox and the hook waits for the answer (RequestApproval,
//     approval.go), then prints the host's decision; unanswered in time,
//     or with the hub down, it prints nothing and the host shows its own
//     prompt;
//   - notification (Claude Code: idle prompt, permission prompt shown):
//     the agent is marked waiting for a person; session end clears it;
//   - session end: the agent shows offline at once (EndSession).
//
// Once the host has the messages (the answer is written to stdout, which
// the host reads when the hook exits), the hook confirms them
// (ConfirmDelivery, via "hook"): they are then in the agent's context. A
// hook that gives up or cannot write its answer confirms nothing.
//
// A hook never breaks its host: whatever fails (no token, hub down, token
// refused, slow hub, unknown event), it exits 0 with at most one line on
// stderr and an empty JSON object on stdout, within its time-out.
//
// The formats are the hosts' documented ones:
//   - Claude Code: https://code.claude.com/docs/en/hooks (SessionStart,
//     UserPromptSubmit, PostToolUse: hookSpecificOutput.additionalContext;
//     Stop: decision "block" and reason, stop_hook_active in the input);
//   - Gemini CLI: https://geminicli.com/docs/hooks/reference (SessionStart,
//     BeforeAgent, AfterTool: hookSpecificOutput.additionalContext;
//     AfterAgent: decision "deny" and reason, stop_hook_active);
//   - Codex: https://developers.openai.com/codex/hooks (the Claude Code
//     event names and output fields).
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hooksock"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// confirmTimeout bounds the confirmation of the messages an answer showed,
// once the answer is written.
const confirmTimeout = 150 * time.Millisecond

// output is the JSON the hook prints.
type output struct {
	Decision           string       `json:"decision,omitempty"`
	Reason             string       `json:"reason,omitempty"`
	HookSpecificOutput *specificOut `json:"hookSpecificOutput,omitempty"`
}

type specificOut struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// Run runs the hook of host h for event, reading the host's JSON from
// stdin and writing its answer to stdout. It never fails: a problem is one
// line on stderr, and the host goes on as if there were no hook.
func Run(ctx context.Context, h hooklocal.Host, event string, stdin io.Reader, stdout, stderr io.Writer, o hooklocal.Options) {
	warn := func(format string, args ...any) { hooklocal.Fail(stdout, stderr, format, args...) }
	step, ok := h.Events[event]
	if !ok {
		warn("%s has no hook event %q (known: %s); nothing done", h.Name, event, hooklocal.EventNames(h))
		return
	}
	if o.Token == "" {
		warn("no agent token: set HUB_TOKEN or HUB_TOKEN_FILE (hub setup writes them); nothing injected")
		return
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = hooklocal.DefaultTimeout
	}
	if step == hooklocal.Approval {
		timeout += o.ApprovalWait + hooklocal.ApprovalMargin
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in := readInput(ctx, stdin)
	if step == hooklocal.Approval {
		if hooklocal.OwnTool(in.ToolName) {
			// The hub's own tools act only as this agent: never a
			// person's question.
			write(stdout, stderr, allow(event))
			return
		}
		if o.ApprovalWait <= 0 {
			return // not relayed: the host asks at once
		}
		if err := tooLarge(in); err != nil {
			warn("%s", describe(err, o.Addr))
			return
		}
	}
	bridge, rep := hooklocal.AskBridge(ctx, h, step, event, &in, o)
	switch rep.Answer {
	case hooksock.AnswerQuiet:
		if h.Quiet != "" {
			fmt.Fprintln(stdout, h.Quiet)
		}
		return
	case hooksock.AnswerPrint:
		// The bridge asked the hub what this run would (Output).
		defer bridge.Close()
		if _, err := io.WriteString(stdout, rep.Output); err == nil {
			bridge.Synced()
		}
		return
	}
	if bridge != nil {
		defer bridge.Close()
	}
	var out any
	var shown []string // the messages the answer shows
	var client hubv1.AgentServiceClient
	var err error
	if step == hooklocal.Approval {
		var d *decisionOut
		if d, err = askApproval(ctx, event, in, o); d != nil {
			out = d
		}
	} else {
		conn, derr := mcpbridge.Dial(o.Addr, o.Token)
		if derr != nil {
			warn("%s", describe(derr, o.Addr))
			return
		}
		defer conn.Close()
		client = hubv1.NewAgentServiceClient(conn)
		var r *output
		if r, shown, err = ask(ctx, client, step, event, in, h); r != nil {
			out = r
		}
	}
	if err != nil {
		warn("%s", describe(err, o.Addr))
		return
	}
	if bridge != nil {
		bridge.Synced()
	}
	if out == nil {
		if h.Quiet != "" {
			fmt.Fprintln(stdout, h.Quiet)
		}
		return
	}
	if !write(stdout, stderr, out) {
		return
	}
	if len(shown) == 0 {
		return
	}
	// Written: the host reads it when the hook exits. An answer the hook
	// gave up on was not written: only what the host has is confirmed, on
	// a deadline of its own, so that a hub slow to answer the question
	// does not leave what the host now holds unconfirmed (and carried again
	// by another path).
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), confirmTimeout)
	defer ccancel()
	if _, err := client.ConfirmDelivery(cctx, &hubv1.ConfirmDeliveryRequest{Ids: shown, Via: "hook"}); err != nil {
		fmt.Fprintf(stderr, "hub hook: warning: %s\n", strings.Replace(describe(err, o.Addr), "nothing injected", "the messages shown are not marked in context", 1))
	}
}

// write prints the answer out as one line of JSON and reports whether it
// was written.
func write(stdout, stderr io.Writer, out any) bool {
	if _, err := io.WriteString(stdout, line(out)); err != nil {
		fmt.Fprintf(stderr, "hub hook: warning: the answer could not be written (%v); nothing confirmed\n", err)
		return false
	}
	return true
}

// ask asks the hub what the step needs and returns the answer to print
// (nil: nothing to say) and the IDs of the messages it shows.
func ask(ctx context.Context, client hubv1.AgentServiceClient, step hooklocal.Step, event string, in hooklocal.Input, h hooklocal.Host) (*output, []string, error) {
	inject := func(text string) *output {
		if text == "" {
			return nil
		}
		// Hosts may show the context to a person: nothing in it drives a terminal.
		return &output{HookSpecificOutput: &specificOut{HookEventName: event, AdditionalContext: termtext.Clean(text)}}
	}
	note := func(ev hub.HostEvent, text, key string) error {
		_, err := client.NoteHostEvent(ctx, &hubv1.NoteHostEventRequest{Event: string(ev), Text: text, CallKey: key})
		return err
	}
	hostNote := func() error {
		if n, ok := hooklocal.HostNote(step, in); ok {
			return note(hub.HostEvent(n.Event), n.Text, n.CallKey)
		}
		return nil
	}
	switch step {
	case hooklocal.SessionStart:
		r, err := client.GetStatus(ctx, &hubv1.GetStatusRequest{})
		if err != nil {
			return nil, nil, err
		}
		return inject(sessionText(r.GetStatus())), nil, nil
	case hooklocal.Inject:
		// The agent works again: it no longer waits for a person, and a
		// tool call a person left to the terminal is seen to run.
		if err := hostNote(); err != nil {
			return nil, nil, err
		}
		r, err := client.TakeInjection(ctx, &hubv1.TakeInjectionRequest{})
		if err != nil {
			return nil, nil, err
		}
		out, shown := injection(event, r)
		return out, shown, nil
	case hooklocal.NeedsInput:
		return nil, nil, hostNote() // a notification that asks nothing of a person reports nothing
	case hooklocal.SessionEnd:
		if err := note(hub.HostSessionEnd, "", ""); err != nil {
			return nil, nil, err
		}
		_, err := client.EndSession(ctx, &hubv1.EndSessionRequest{Via: "hook"})
		return nil, nil, err
	default:
		r, err := client.CheckStop(ctx, &hubv1.CheckStopRequest{Continuing: in.StopHookActive})
		if err != nil {
			return nil, nil, err
		}
		if !r.GetHold() {
			// The turn ends with nothing unread: the agent waits at its prompt.
			return nil, nil, note(hub.HostNeedsInput, hub.TurnEnded, "")
		}
		out, shown := held(h, r)
		return out, shown, nil
	}
}

// held is the answer to a stop of host h the hub holds (r), and the IDs of
// the messages it shows.
func held(h hooklocal.Host, r *hubv1.CheckStopResponse) (*output, []string) {
	return &output{Decision: h.Block, Reason: termtext.Clean(stopReason(r))}, messageIDs(r.GetMessages())
}

// injection is the answer to a prompt or a tool use at event given the
// hub's injection r (nil: nothing to say), and the IDs of the messages it
// shows.
func injection(event string, r *hubv1.TakeInjectionResponse) (*output, []string) {
	if len(r.GetMessages()) == 0 {
		return nil, nil
	}
	text, shown := mcpbridge.FrameMessages(r.GetMessages(), r.GetMore())
	// Hosts may show the context to a person: nothing in it drives a terminal.
	return &output{HookSpecificOutput: &specificOut{HookEventName: event, AdditionalContext: termtext.Clean(text)}}, shown
}

// Output is what `hub hook HOST EVENT` prints for the run of event of
// host given what the hub answered it (a), and the IDs of the messages it
// shows, which the hook confirms once printed: for a prompt or a tool use
// the injection, for a stop its check, for a permission request the
// person's decision on the approval asked (none: nobody answered in
// time), for a notification or a session's end nothing. The agent's
// bridge answers such a hook with it (hooksock.AnswerPrint,
// mcpbridge.Options.HookOutput). ok false: host has no such event, or it
// takes another answer.
func Output(host, event string, a mcpbridge.HookAnswer) (stdout string, shown []string, ok bool) {
	h, known := hooklocal.Hosts[host]
	if !known {
		return "", nil, false
	}
	var out any
	inj, stop, asked := a.Injection, a.Stop, a.Asked
	switch step := h.Events[event]; {
	case step == hooklocal.Inject && inj != nil && stop == nil && asked == nil:
		if o, ids := injection(event, inj); o != nil {
			out, shown = o, ids
		}
	case step == hooklocal.Stop && inj == nil && stop != nil && asked == nil:
		if stop.GetHold() {
			out, shown = held(h, stop)
		}
	case step == hooklocal.Approval && inj == nil && stop == nil && asked != nil:
		if d := decided(event, asked, a.Approval); d != nil {
			out = d
		}
	case (step == hooklocal.NeedsInput || step == hooklocal.SessionEnd) && inj == nil && stop == nil && asked == nil:
	default:
		return "", nil, false
	}
	if out == nil {
		if h.Quiet == "" {
			return "", nil, true
		}
		return h.Quiet + "\n", nil, true
	}
	return line(out), shown, true
}

// line is the answer out as the one line of JSON the hook prints.
func line(out any) string {
	// stdout is sanitized (termtext.Writer); escaping what it would remove
	// keeps the JSON the host parses exact.
	b, _ := json.Marshal(out)
	return string(termtext.EscapeJSON(b)) + "\n"
}

// messageIDs returns the IDs of ms.
func messageIDs(ms []*hubv1.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.GetId()
	}
	return out
}

// readInput reads the host's JSON; a host that sends none, or bad JSON,
// gets the defaults (a stop counts as a new one). It gives up when ctx ends.
func readInput(ctx context.Context, stdin io.Reader) hooklocal.Input {
	var in hooklocal.Input
	if _, complete := hooklocal.ReadInput(ctx, stdin, &in); !complete {
		return hooklocal.Input{}
	}
	return in
}

// describe says in one line why the hub could not answer.
func describe(err error, addr string) string {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Sprintf("hub at %s refused the agent token (%s); nothing injected", addr, status.Convert(err).Message())
	case codes.DeadlineExceeded:
		return fmt.Sprintf("hub at %s did not answer in time; nothing injected", addr)
	case codes.Unavailable:
		return fmt.Sprintf("hub at %s not reachable; nothing injected", addr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("hub at %s did not answer in time; nothing injected", addr)
	}
	msg := err.Error()
	if s, ok := status.FromError(err); ok {
		msg = s.Message()
	}
	return fmt.Sprintf("hub at %s: %s; nothing injected", addr, strings.ReplaceAll(msg, "\n", " "))
}
