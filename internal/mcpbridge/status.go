package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// NoInput is the input of tools that take no arguments.
type NoInput struct{}

// HeartbeatOutput is what the heartbeat tool returns.
type HeartbeatOutput struct {
	HeartbeatID      string `json:"heartbeat_id" jsonschema:"your new current heartbeat ID (YYYYMMDDHHMMSS); logs and checkpoints are filed under it automatically"`
	StartedAt        string `json:"started_at,omitempty"`
	UnreadCount      int64  `json:"unread_count"`
	MentionCount     int64  `json:"mention_count"`
	Beat             int64  `json:"beat"`
	SinceLast        int64  `json:"since_last" jsonschema:"beats since your previous call"`
	SinceLastReading string `json:"since_last_reading,omitempty"`
}

func heartbeatTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[NoInput, HeartbeatOutput]) {
	t := &mcp.Tool{
		Name:  "heartbeat",
		Title: "Start a unit of work",
		Description: "Start a new unit of work: call it when you begin a session or a new task. " +
			"It sets your current heartbeat ID (activity logs and checkpoints are filed under it) " +
			"and tells you your unread messages and how long you were away.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: false, DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, _ NoInput) (*mcp.CallToolResult, HeartbeatOutput, error) {
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, HeartbeatOutput{}, err
		}
		r, err := b.client.Heartbeat(ctx, &hubv1.HeartbeatRequest{})
		if err != nil {
			return nil, HeartbeatOutput{}, b.hubError(err)
		}
		out := HeartbeatOutput{
			HeartbeatID:      r.GetHeartbeatId(),
			StartedAt:        formatTime(r.GetStartedAt()),
			UnreadCount:      r.GetUnreadCount(),
			MentionCount:     r.GetMentionCount(),
			Beat:             r.GetBeat(),
			SinceLast:        r.GetSinceLast(),
			SinceLastReading: r.GetSinceLastReading(),
		}
		msg := fmt.Sprintf("Heartbeat %s started. %s unread (%s). Beat %d, since_last %d",
			out.HeartbeatID, plural(out.UnreadCount, "message", "messages"),
			plural(out.MentionCount, "mention", "mentions"), out.Beat, out.SinceLast)
		if out.SinceLastReading != "" {
			msg += " (" + out.SinceLastReading + ")"
		}
		msg += "."
		if out.UnreadCount > 0 {
			msg += " Read them with read_messages."
		}
		return text(msg), out, nil
	}
	return t, h
}

// StatusOutput is what check_hub_status returns.
type StatusOutput struct {
	Agent            string    `json:"agent" jsonschema:"who you are, as the hub knows you from your token"`
	UnreadCount      int64     `json:"unread_count"`
	MentionCount     int64     `json:"mention_count"`
	HeartbeatID      string    `json:"heartbeat_id,omitempty"`
	Beat             int64     `json:"beat"`
	SinceLast        int64     `json:"since_last"`
	SinceLastReading string    `json:"since_last_reading,omitempty"`
	Health           string    `json:"health,omitempty" jsonschema:"healthy, warning or anomaly"`
	Findings         []Finding `json:"findings,omitempty"`
	DeepWork         *DeepWork `json:"deep_work,omitempty"`
	Online           []string  `json:"online,omitempty"`
	Waiting          []string  `json:"waiting,omitempty"`
	LatestMessageID  string    `json:"latest_message_id,omitempty" jsonschema:"newest message addressed to you: pass it as after to wait_for_messages to wait only for newer ones"`
	HubTime          string    `json:"hub_time,omitempty"`
}

func fromStatus(s *hubv1.Status) StatusOutput {
	return StatusOutput{
		Agent:            s.GetAgent(),
		UnreadCount:      s.GetUnreadCount(),
		MentionCount:     s.GetMentionCount(),
		HeartbeatID:      s.GetCurrentHeartbeatId(),
		Beat:             s.GetBeat(),
		SinceLast:        s.GetSinceLast(),
		SinceLastReading: s.GetSinceLastReading(),
		Health:           s.GetHealth(),
		Findings:         fromFindings(s.GetFindings()),
		DeepWork:         fromDeepWork(s.GetDeepWork()),
		Online:           s.GetOnline(),
		Waiting:          s.GetWaiting(),
		LatestMessageID:  s.GetLatestMessageId(),
		HubTime:          formatTime(s.GetHubTime()),
	}
}

func checkHubStatusTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[NoInput, StatusOutput]) {
	t := &mcp.Tool{
		Name:  "check_hub_status",
		Title: "Check hub status",
		Description: "Cheap look at your situation: unread messages and mentions, current heartbeat ID, " +
			"beat, health findings about you, deep work in force, and who is online. " +
			"Use it between steps; it does not wait (use wait_for_messages to wait).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, _ NoInput) (*mcp.CallToolResult, StatusOutput, error) {
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, StatusOutput{}, err
		}
		r, err := b.client.GetStatus(ctx, &hubv1.GetStatusRequest{})
		if err != nil {
			return nil, StatusOutput{}, b.hubError(err)
		}
		out := fromStatus(r.GetStatus())
		return text(statusText(out)), out, nil
	}
	return t, h
}

func statusText(s StatusOutput) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s unread (%s), heartbeat %s, beat %d, since_last %d",
		s.Agent, plural(s.UnreadCount, "message", "messages"),
		plural(s.MentionCount, "mention", "mentions"), orNone(s.HeartbeatID), s.Beat, s.SinceLast)
	if s.SinceLastReading != "" {
		fmt.Fprintf(&sb, " (%s)", s.SinceLastReading)
	}
	if s.Health != "" {
		fmt.Fprintf(&sb, ", health %s", s.Health)
	}
	sb.WriteString(".")
	for _, f := range s.Findings {
		fmt.Fprintf(&sb, "\n- %s %s: %s", f.Severity, f.Kind, f.Text)
	}
	if s.DeepWork != nil {
		fmt.Fprintf(&sb, "\nDeep work (%s): %s", s.DeepWork.Mode, s.DeepWork.PlannedActivity)
		if s.DeepWork.EndsAt != "" {
			fmt.Fprintf(&sb, " until %s", s.DeepWork.EndsAt)
		}
	}
	if len(s.Online) > 0 {
		fmt.Fprintf(&sb, "\nOnline: %s", strings.Join(s.Online, ", "))
	}
	return sb.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
