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
	HeartbeatID      string `json:"heartbeat_id"`
	StartedAt        string `json:"started_at,omitempty"`
	UnreadCount      int64  `json:"unread_count"`
	MentionCount     int64  `json:"mention_count"`
	Beat             int64  `json:"beat"`
	SinceLast        int64  `json:"since_last"`
	SinceLastReading string `json:"since_last_reading,omitempty"`
}

func heartbeatTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "heartbeat",
		Description: "Start a unit of work (session start, new task): sets the heartbeat ID your logs go under; returns unread and time away.",
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (string, HeartbeatOutput, error) {
		r, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_Heartbeat{Heartbeat: &hubv1.HeartbeatRequest{}}},
			(*hubv1.StreamReply).GetHeartbeat,
			func() (*hubv1.HeartbeatResponse, error) { return b.client.Heartbeat(ctx, &hubv1.HeartbeatRequest{}) })
		if err != nil {
			return "", HeartbeatOutput{}, err
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
		msg := fmt.Sprintf("Heartbeat ID %s; %s unread", out.HeartbeatID, plural(out.UnreadCount, "message", "messages"))
		if out.SinceLastReading != "" {
			msg += "; " + out.SinceLastReading
		}
		msg += "."
		if out.UnreadCount > 0 {
			msg += " Read them with read_messages."
		}
		return msg, out, nil
	})
}

// StatusOutput is what check_hub_status returns.
type StatusOutput struct {
	Agent            string    `json:"agent"`
	UnreadCount      int64     `json:"unread_count"`
	MentionCount     int64     `json:"mention_count"`
	HeartbeatID      string    `json:"heartbeat_id,omitempty"`
	Beat             int64     `json:"beat"`
	SinceLast        int64     `json:"since_last"`
	SinceLastReading string    `json:"since_last_reading,omitempty"`
	Health           string    `json:"health,omitempty"`
	Findings         []Finding `json:"findings,omitempty"`
	DeepWork         *DeepWork `json:"deep_work,omitempty"`
	Online           []string  `json:"online,omitempty"`
	Waiting          []string  `json:"waiting,omitempty"`
	LatestMessageID  string    `json:"latest_message_id,omitempty"`
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

func checkHubStatusTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "check_hub_status",
		Description: "Your situation now: unread, mentions, heartbeat ID, beat, health, deep work, who is online.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (string, StatusOutput, error) {
		r, err := b.client.GetStatus(ctx, &hubv1.GetStatusRequest{})
		if err != nil {
			return "", StatusOutput{}, err
		}
		out := fromStatus(r.GetStatus())
		return statusText(out), out, nil
	})
}

func statusText(s StatusOutput) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %s unread (%s), heartbeat ID %s",
		s.Agent, plural(s.UnreadCount, "message", "messages"),
		plural(s.MentionCount, "mention", "mentions"), orNone(s.HeartbeatID))
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
	return sb.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
