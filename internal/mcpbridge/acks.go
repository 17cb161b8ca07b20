package mcpbridge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// priorityNames are the priorities a tool takes, least urgent first.
var priorityNames = []string{"low", "normal", "high", "urgent"}

// toPriority maps a priority name ("" is normal) to the API's value.
func toPriority(s string) (hubv1.Priority, error) {
	for i, n := range priorityNames {
		if strings.EqualFold(s, n) {
			return hubv1.Priority(i + 1), nil
		}
	}
	if s == "" {
		return hubv1.Priority_PRIORITY_NORMAL, nil
	}
	return 0, fmt.Errorf("priority %q is not one of %s", s, strings.Join(priorityNames, ", "))
}

// fromPriority names a message's priority for a tool's output: "" for
// normal (and unspecified), so that most messages do not carry it.
func fromPriority(p hubv1.Priority) string {
	if p == hubv1.Priority_PRIORITY_NORMAL || p < hubv1.Priority_PRIORITY_LOW || p > hubv1.Priority_PRIORITY_URGENT {
		return ""
	}
	return priorityNames[p-1]
}

// orNormal is a tool's priority name with "" spelled out.
func orNormal(p string) string {
	if p == "" {
		return "normal"
	}
	return p
}

// byPriority returns msgs most urgent first, by their order within a
// priority (a copy: msgs is left as it is).
func byPriority(msgs []Message) []Message {
	rank := func(m Message) int {
		if m.Priority == "" {
			return 2 // normal
		}
		return slices.Index(priorityNames, m.Priority) + 1
	}
	out := slices.Clone(msgs)
	slices.SortStableFunc(out, func(a, b Message) int { return rank(b) - rank(a) })
	return out
}

// newestID returns the highest ID of msgs: a reply's cursor when the hub
// gave none (its messages are ordered by priority, not by ID).
func newestID(msgs []Message) string {
	best, out := int64(-1), ""
	for _, m := range msgs {
		if n, err := strconv.ParseInt(m.ID, 10, 64); err == nil && n > best {
			best, out = n, m.ID
		}
	}
	return out
}

// oldestID returns the lowest ID of msgs.
func oldestID(msgs []Message) string {
	best, out := int64(math.MaxInt64), ""
	for _, m := range msgs {
		if n, err := strconv.ParseInt(m.ID, 10, 64); err == nil && n < best {
			best, out = n, m.ID
		}
	}
	return out
}

// idBefore returns the cursor just below id, from which a read returns id.
func idBefore(id string) string {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 1 {
		return ""
	}
	return strconv.FormatInt(n-1, 10)
}

// AcknowledgeMessageInput is the input of acknowledge_message.
type AcknowledgeMessageInput struct {
	IDs []ID `json:"ids" jsonschema:"message IDs"`
}

// AcknowledgeMessageOutput is what acknowledge_message returns.
type AcknowledgeMessageOutput struct {
	Acknowledged []string `json:"acknowledged"`
}

func acknowledgeMessageTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "acknowledge_message",
		Description: "Confirm messages you received; do it for those marked 'acknowledge it' once handled (the sender sees it).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in AcknowledgeMessageInput) (string, AcknowledgeMessageOutput, error) {
		ids := make([]string, len(in.IDs))
		for i, id := range in.IDs {
			ids[i] = string(id)
		}
		r, err := b.client.AcknowledgeMessage(ctx, &hubv1.AcknowledgeMessageRequest{Ids: ids})
		if err != nil {
			return "", AcknowledgeMessageOutput{}, err
		}
		var out AcknowledgeMessageOutput
		for _, a := range r.GetAcks() {
			out.Acknowledged = append(out.Acknowledged, a.GetMessageId())
		}
		return "Acknowledged " + strings.Join(out.Acknowledged, ", ") + ".", out, nil
	})
}
