package hooklocal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
)

// Input is what a hook run reads of the host's JSON.
type Input struct {
	StopHookActive   bool            `json:"stop_hook_active"`
	SessionID        string          `json:"session_id"`
	ToolName         string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	Message          string          `json:"message"`
	NotificationType string          `json:"notification_type"`
	// PermissionSuggestions: a PermissionRequest's rules the host offers.
	PermissionSuggestions []PermissionSuggestion `json:"permission_suggestions"`
}

// PermissionSuggestion is one of the rules a host offers with its
// permission prompt (Claude Code's permission_suggestions: type addRules,
// behavior allow, rules of toolName and ruleContent such as "npm test:*").
type PermissionSuggestion struct {
	Type     string `json:"type"`
	Behavior string `json:"behavior"`
	Rules    []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
}

// suggestedRule returns the host's first suggested allow rule for the
// call's own tool, "" when it gave none: what an "always allow" covers.
func suggestedRule(in Input) string {
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

// ApprovalMargin is what a permission request's hook waits beyond its wait
// for a person, for the answer of the hub or of the agent's bridge: the
// hub answers a little before the call's deadline, so the hook hears a
// time-out as an answer rather than cutting the call.
const ApprovalMargin = 3 * time.Second

// OwnTool reports whether tool is one of the hub's own MCP tools as Claude
// Code and Codex name them (mcp__SERVER__TOOL, the server named by hub
// setup): they act only as the agent, so no person is asked about them.
func OwnTool(tool string) bool { return strings.HasPrefix(tool, "mcp__hub__") }

// ApprovalRequest is the RequestApproval of a permission request with the host's
// input in, waiting up to wait for a person (a second at least): the
// tool, its input as the host gave it, the call's key (CallKey) and the
// host's suggested rule.
func ApprovalRequest(in Input, wait time.Duration) hooksock.Approval {
	return hooksock.Approval{Tool: in.ToolName, Input: string(in.ToolInput), CallKey: CallKey(in), SuggestedRule: suggestedRule(in),
		WaitSeconds: int(max(1, wait/time.Second))}
}

// ReadInput decodes the host's JSON from stdin into v (a host that sends
// none, or bad JSON, leaves v as it was) and returns the bytes it read of
// stdin, for a hub run in this process's place (the JSON whole). It gives
// up when ctx ends: complete is then false, and v and read are not to be
// used.
func ReadInput(ctx context.Context, stdin io.Reader, v any) (read []byte, complete bool) {
	done := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		_ = json.NewDecoder(io.TeeReader(io.LimitReader(stdin, MaxInput), &buf)).Decode(v)
		done <- buf.Bytes()
	}()
	select {
	case read := <-done:
		return read, true
	case <-ctx.Done():
		return nil, false
	}
}

// CallKey names a host's tool call the same way in its PermissionRequest
// and its PostToolUse: the session, the tool and its input (a
// description, which a host may add or reword between the two, left out).
func CallKey(in Input) string {
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

// The hub's host events a hook run reports (NoteHostEvent's event).
const (
	noteNeedsInput = "needs_input"
	noteActive     = "active"
	noteToolRan    = "tool_ran"
)

// HostNote is what the hook run of step, with the host's input in,
// reports of the agent's state to the hub before anything else
// (NoteHostEvent): a prompt or a tool use, that the agent works again (a
// tool call a person left to the terminal is seen to run); a notification
// that the agent waits for a person, in the host's words. ok false: the
// run reports nothing (a notification that asks nothing of a person, such
// as a sign-in that worked; the other steps, whose calls are the hub's).
func HostNote(step Step, in Input) (n hooksock.Note, ok bool) {
	switch step {
	case Inject:
		if in.ToolName != "" {
			return hooksock.Note{Event: noteToolRan, CallKey: CallKey(in)}, true
		}
		return hooksock.Note{Event: noteActive}, true
	case NeedsInput:
		switch in.NotificationType {
		case "", "idle_prompt", "permission_prompt", "elicitation_dialog":
			text := strings.TrimSpace(in.Message)
			if text == "" {
				text = "waiting for your input"
			}
			return hooksock.Note{Event: noteNeedsInput, Text: text}, true
		}
	}
	return hooksock.Note{}, false
}
