package mcpbridge

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// Message is one message as a tool returns it.
type Message struct {
	ID          string   `json:"id"`
	From        string   `json:"from"`
	SenderKind  string   `json:"sender_kind"` // agent, person, admin or hub: who sent it, whatever the body claims
	To          []string `json:"to,omitempty"`
	Channel     string   `json:"channel,omitempty"`
	Body        string   `json:"body"`
	Mentions    []string `json:"mentions,omitempty"`
	ReplyTo     string   `json:"reply_to,omitempty"`
	Kind        string   `json:"kind,omitempty"` // nudge, pulse, cron or system; absent for a normal message
	CreatedAt   string   `json:"created_at,omitempty"`
	Unread      bool     `json:"unread,omitempty"`
	MentionsYou bool     `json:"mentions_you,omitempty"`
	Priority    string   `json:"priority,omitempty"` // low, high or urgent; absent for normal
	AckRequired bool     `json:"ack_required,omitempty"`
}

// Finding is one health finding about the caller.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Text     string `json:"text,omitempty"`
}

// DeepWork is a deep work declaration.
type DeepWork struct {
	ID              string `json:"id"`
	Mode            string `json:"mode"`
	PlannedActivity string `json:"planned_activity"`
	State           string `json:"state,omitempty"`
	StartedAt       string `json:"started_at,omitempty"`
	EndsAt          string `json:"ends_at,omitempty"`
}

// Elapsed is the time since a heartbeat began (or since the last activity log).
type Elapsed struct {
	Seconds        int64  `json:"elapsed_seconds"`
	Formatted      string `json:"elapsed_formatted"`
	WarningMessage string `json:"warning_message,omitempty"`
	Level          string `json:"level,omitempty"` // none, info, warning or relaxed (deep work declared)
}

func fromMessage(m *hubv1.Message) Message {
	kind := m.GetKind()
	switch kind {
	case "message":
		kind = ""
	case "heartbeat":
		// The hub's kind for a pulse; tools call it a pulse throughout, so
		// that "heartbeat" means only the heartbeat tool and its ID.
		kind = "pulse"
	}
	return Message{
		ID:          m.GetId(),
		From:        m.GetFrom(),
		SenderKind:  SenderKind(m),
		To:          m.GetTo(),
		Channel:     m.GetChannel(),
		Body:        m.GetBody(),
		Mentions:    m.GetMentions(),
		ReplyTo:     m.GetReplyTo(),
		Kind:        kind,
		CreatedAt:   formatTime(m.GetCreatedAt()),
		Unread:      m.GetUnread(),
		MentionsYou: m.GetMentionsYou(),
		Priority:    fromPriority(m.GetPriority()),
		AckRequired: m.GetAckRequired(),
	}
}

func fromMessages(ms []*hubv1.Message) []Message {
	if len(ms) == 0 {
		return nil
	}
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = fromMessage(m)
	}
	return out
}

func fromFindings(fs []*hubv1.Finding) []Finding {
	if len(fs) == 0 {
		return nil
	}
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = Finding{Kind: f.GetKind(), Severity: f.GetSeverity(), Text: f.GetText()}
	}
	return out
}

func fromDeepWork(d *hubv1.DeepWork) *DeepWork {
	if d == nil || d.GetId() == "" && d.GetMode() == "" {
		return nil
	}
	return &DeepWork{
		ID:              d.GetId(),
		Mode:            d.GetMode(),
		PlannedActivity: d.GetPlannedActivity(),
		State:           d.GetState(),
		StartedAt:       formatTime(d.GetStartedAt()),
		EndsAt:          formatTime(d.GetEndsAt()),
	}
}

func fromElapsed(e *hubv1.Elapsed) *Elapsed {
	if e == nil {
		return nil
	}
	return &Elapsed{
		Seconds:        e.GetElapsedSeconds(),
		Formatted:      e.GetElapsedFormatted(),
		WarningMessage: e.GetWarningMessage(),
		Level:          e.GetLevel(),
	}
}

// formatTime renders a timestamp in RFC 3339 (local zone), empty when unset.
func formatTime(ts *timestamppb.Timestamp) string {
	if ts == nil || (ts.GetSeconds() == 0 && ts.GetNanos() == 0) {
		return ""
	}
	return ts.AsTime().Local().Format(time.RFC3339)
}

// SenderKind names the kind of principal m came from (agent, person,
// admin, hub), as the hub recorded it when m was posted; "unknown" from a
// hub that does not say.
func SenderKind(m *hubv1.Message) string {
	if k := m.GetSenderKind(); k != hubv1.SenderKind_SENDER_KIND_UNSPECIFIED {
		return strings.ToLower(strings.TrimPrefix(k.String(), "SENDER_KIND_"))
	}
	return "unknown"
}

// SenderLabel is how every text an agent reads names m's sender: its name
// and its kind, "pat (person)", "bob (agent)". Names hold no spaces or
// parentheses, so no sender can write another kind into its name.
func SenderLabel(m *hubv1.Message) string { return label(m.GetFrom(), SenderKind(m)) }

func label(from, kind string) string { return from + " (" + kind + ")" }

// renderMessages writes one line per message for the text content, so a
// client that shows only text still gives the model every body.
func renderMessages(sb *strings.Builder, ms []Message) {
	for _, m := range ms {
		fmt.Fprintf(sb, "\n[%s] %s", m.ID, label(m.From, m.SenderKind))
		switch {
		case m.Channel != "":
			fmt.Fprintf(sb, " in %s", m.Channel)
		case len(m.To) > 0:
			fmt.Fprintf(sb, " → %s", strings.Join(m.To, ", "))
		}
		var tags []string
		if m.Priority != "" {
			tags = append(tags, m.Priority)
		}
		if m.Kind != "" {
			tags = append(tags, m.Kind)
		}
		if m.AckRequired {
			tags = append(tags, "acknowledge it")
		}
		if m.MentionsYou {
			tags = append(tags, "mentions you")
		}
		if m.ReplyTo != "" {
			tags = append(tags, "reply to "+m.ReplyTo)
		}
		if len(tags) > 0 {
			fmt.Fprintf(sb, " (%s)", strings.Join(tags, ", "))
		}
		sb.WriteString(": ")
		sb.WriteString(m.Body)
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
