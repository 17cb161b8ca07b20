package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// approvalMargin is what a permission request's hook keeps beyond its wait
// for the hub's answer: the hub answers a little before the call's
// deadline, so the hook hears a time-out as an answer rather than cutting
// the call.
const approvalMargin = 3 * time.Second

// maxApprovalInput bounds the tool input sent with an approval (the hub
// takes 16 KiB); a larger one is sent cut, field by field.
const maxApprovalInput = 12 << 10

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
func askApproval(ctx context.Context, event string, in input, o Options) (*decisionOut, error) {
	if in.ToolName == "" {
		return nil, nil // nothing to ask about
	}
	conn, err := mcpbridge.Dial(o.Addr, o.Token)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	key := callKey(in)
	r, err := hubv1.NewAgentServiceClient(conn).RequestApproval(ctx, &hubv1.RequestApprovalRequest{
		Tool: in.ToolName, Input: approvalInput(in.ToolInput), CallKey: key,
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

// callKey names a host's tool call the same way in its PermissionRequest
// and its PostToolUse: the session, the tool and its input (a
// description, which a host may add or reword between the two, left out).
func callKey(in input) string {
	var v any
	if len(in.ToolInput) > 0 && json.Unmarshal(in.ToolInput, &v) == nil {
		if m, ok := v.(map[string]any); ok {
			delete(m, "description")
		}
	}
	canon, _ := json.Marshal(v) // sorted keys: the same input gives the same bytes
	h := sha256.New()
	for _, part := range [][]byte{[]byte(in.SessionID), []byte(in.ToolName), canon} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// approvalInput is the tool input to show a person: as the host gave it,
// or, past maxApprovalInput, each string field cut and "truncated" set.
func approvalInput(raw json.RawMessage) string {
	if len(raw) <= maxApprovalInput {
		return string(raw)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		b, _ := json.Marshal(map[string]any{"truncated": true, "preview": cut(string(raw), maxApprovalInput/2)})
		return string(b)
	}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			m[k] = cut(v, 1024)
		case map[string]any, []any:
			m[k] = "(left out)"
		}
	}
	m["truncated"] = true
	b, _ := json.Marshal(m)
	if len(b) > maxApprovalInput {
		b, _ = json.Marshal(map[string]any{"truncated": true, "preview": cut(string(raw), maxApprovalInput/2)})
	}
	return string(b)
}
