package hook

import (
	"context"
	"fmt"
	"strings"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// decisionOut is a PermissionRequest hook's answer, in the shape both
// Claude Code and Codex document: hookSpecificOutput.decision with
// behavior "allow" or "deny" (and a deny's message). Nothing else is set:
// Codex fails closed on updatedInput, updatedPermissions or interrupt.
type decisionOut struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		Decision      struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message,omitempty"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// allow is a permission request's allow.
func allow(event string) *decisionOut {
	out := &decisionOut{}
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.Decision.Behavior = "allow"
	return out
}

// tooLarge is the error of a permission request whose call's input is over
// what an approval holds, nil for one within: a person approves the call
// exactly as it runs, or not at all.
func tooLarge(in hooklocal.Input) error {
	if n := len(in.ToolInput); n > hub.MaxApprovalInput {
		return fmt.Errorf("the %s call's input is %d bytes, over the %d (64 KiB) an approval holds: not relayed to the inbox, answer it at the terminal", in.ToolName, n, hub.MaxApprovalInput)
	}
	return nil
}

// askApproval relays a permission request to the people's inbox and waits
// for the answer. It returns nil, with no error, when nobody answered in
// time: the host then shows its own prompt, as if the hub were not there.
func askApproval(ctx context.Context, event string, in hooklocal.Input, o hooklocal.Options) (*decisionOut, error) {
	if in.ToolName == "" {
		return nil, nil // nothing to ask about
	}
	conn, err := mcpbridge.Dial(o.Addr, o.Token)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req := mcpbridge.ApprovalRequest(hooklocal.ApprovalRequest(in, o.ApprovalWait))
	r, err := hubv1.NewAgentServiceClient(conn).RequestApproval(ctx, req)
	if err != nil {
		return nil, err
	}
	return decided(event, req, r), nil
}

// decided is a permission request's answer at event given the hub's reply
// r to req: nil when nobody answered in time (or the reply is not the
// answer to this very request: an answered approval of its tool, allow or
// deny).
func decided(event string, req *hubv1.RequestApprovalRequest, r *hubv1.RequestApprovalResponse) *decisionOut {
	it := r.GetItem()
	if r.GetTimedOut() || it.GetKind() != string(hub.KindApproval) || it.GetState() != string(hub.ItemAnswered) ||
		it.GetTool() != req.GetTool() {
		return nil
	}
	out := &decisionOut{}
	out.HookSpecificOutput.HookEventName = event
	switch it.GetDecision() {
	case hub.DecisionAllow:
		out.HookSpecificOutput.Decision.Behavior = "allow"
	case hub.DecisionDeny:
		out.HookSpecificOutput.Decision.Behavior = "deny"
		msg := "Denied by " + it.GetAnsweredBy() + " from the Agent Hub inbox."
		if m := strings.TrimSpace(it.GetAnswer()); m != "" {
			msg += " Their message: " + m
		}
		out.HookSpecificOutput.Decision.Message = termtext.Clean(msg)
	default:
		return nil
	}
	return out
}
