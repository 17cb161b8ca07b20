package hook

import (
	"context"
	"fmt"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hooklocal"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// approvalMargin is what a permission request's hook keeps beyond its wait
// for the hub's answer: the hub answers a little before the call's
// deadline, so the hook hears a time-out as an answer rather than cutting
// the call.
const approvalMargin = 3 * time.Second

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

// ownTool reports whether tool is one of the hub's own MCP tools as Claude
// Code and Codex name them (mcp__SERVER__TOOL, the server named by hub
// setup): they act only as the agent, so no person is asked about them.
func ownTool(tool string) bool { return strings.HasPrefix(tool, "mcp__hub__") }

// allow is a permission request's allow.
func allow(event string) *decisionOut {
	out := &decisionOut{}
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.Decision.Behavior = "allow"
	return out
}

// askApproval relays a permission request to the people's inbox and waits
// for the answer. It returns nil, with no error, when nobody answered in
// time: the host then shows its own prompt, as if the hub were not there.
func askApproval(ctx context.Context, event string, in input, o hooklocal.Options) (*decisionOut, error) {
	if in.ToolName == "" {
		return nil, nil // nothing to ask about
	}
	if n := len(in.ToolInput); n > hub.MaxApprovalInput {
		// A person approves the call exactly as it runs, or not at all.
		return nil, fmt.Errorf("the %s call's input is %d bytes, over the %d (64 KiB) an approval holds: not relayed to the inbox, answer it at the terminal", in.ToolName, n, hub.MaxApprovalInput)
	}
	conn, err := mcpbridge.Dial(o.Addr, o.Token)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	key := hooklocal.CallKey(in.Input)
	r, err := hubv1.NewAgentServiceClient(conn).RequestApproval(ctx, &hubv1.RequestApprovalRequest{
		Tool: in.ToolName, Input: string(in.ToolInput), CallKey: key, SuggestedRule: suggestedRule(in),
		WaitSeconds: int32(max(1, o.ApprovalWait/time.Second)),
	})
	if err != nil {
		return nil, err
	}
	it := r.GetItem()
	// Only the answer to this very request counts: an answered approval of
	// this tool and call, allow or deny.
	if r.GetTimedOut() || it.GetKind() != string(hub.KindApproval) || it.GetState() != string(hub.ItemAnswered) ||
		it.GetTool() != in.ToolName {
		return nil, nil
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
		return nil, nil
	}
	return out, nil
}

// permissionSuggestion is one of the rules a host offers with its
// permission prompt (Claude Code's permission_suggestions: type addRules,
// behavior allow, rules of toolName and ruleContent such as "npm test:*").
type permissionSuggestion struct {
	Type     string `json:"type"`
	Behavior string `json:"behavior"`
	Rules    []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
}

// suggestedRule returns the host's first suggested allow rule for the
// call's own tool, "" when it gave none: what an "always allow" covers.
func suggestedRule(in input) string {
	for _, s := range in.PermissionSuggestions {
		if s.Type != "addRules" || s.Behavior != "allow" {
			continue
		}
		for _, r := range s.Rules {
			if r.ToolName == in.ToolName && strings.TrimSpace(r.RuleContent) != "" {
				return r.RuleContent
			}
		}
	}
	return ""
}
