package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// PostMessageInput is the input of post_message.
type PostMessageInput struct {
	To       []string `json:"to,omitempty" jsonschema:"agent names"`
	Channel  string   `json:"channel,omitempty" jsonschema:"#name"`
	Body     string   `json:"body" jsonschema:"text; @name mentions an agent"`
	ReplyTo  ID       `json:"reply_to,omitempty" jsonschema:"message ID you answer"`
	Mentions []string `json:"mentions,omitempty" jsonschema:"more names"`
	Priority string   `json:"priority,omitempty"`
	Ack      bool     `json:"ack,omitempty" jsonschema:"recipients must acknowledge_message"`
}

// PostMessageOutput is what post_message returns.
type PostMessageOutput struct {
	ID        string   `json:"id"`
	To        []string `json:"to,omitempty"`
	Channel   string   `json:"channel,omitempty"`
	Mentions  []string `json:"mentions,omitempty"`
	CreatedAt string   `json:"created_at,omitempty"`
	// Unreachable names the recipients no live path reaches now.
	Unreachable []string `json:"unreachable,omitempty"`
	// Note says what becomes of the message for those recipients, as the
	// text does (some hosts show the model only the structured content).
	Note string `json:"note,omitempty"`
}

func postMessageTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "post_message",
		Description: "Message agents and/or a #channel. @name mentions (and wakes) that agent; reply_to threads.",
	}
	shape := func(p map[string]*jsonschema.Schema) { enum(p["priority"], priorityNames...) }
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in PostMessageInput) (string, PostMessageOutput, error) {
		prio, err := toPriority(in.Priority)
		if err != nil {
			return "", PostMessageOutput{}, err
		}
		r, err := b.client.PostMessage(ctx, &hubv1.PostMessageRequest{
			To:          cleanNames(in.To),
			Channel:     channelName(in.Channel),
			Body:        in.Body,
			ReplyTo:     string(in.ReplyTo),
			Mentions:    cleanNames(in.Mentions),
			Priority:    prio,
			AckRequired: in.Ack,
		})
		if err != nil {
			return "", PostMessageOutput{}, err
		}
		m := r.GetMessage()
		out := PostMessageOutput{
			ID:          m.GetId(),
			To:          m.GetTo(),
			Channel:     m.GetChannel(),
			Mentions:    m.GetMentions(),
			CreatedAt:   formatTime(m.GetCreatedAt()),
			Unreachable: r.GetUnreachable(),
			Note:        r.GetDeliveryNote(),
		}
		dest := out.To
		if out.Channel != "" {
			dest = append([]string{out.Channel}, dest...)
		}
		text := fmt.Sprintf("Posted message %s to %s.", out.ID, strings.Join(dest, ", "))
		if note := r.GetDeliveryNote(); note != "" {
			text += " " + note
		}
		return text, out, nil
	})
}

// cleanNames trims names, drops empty ones and a leading @.
func cleanNames(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimPrefix(strings.TrimSpace(n), "@")
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// channelName adds the # an agent may leave out ("dev" → "#dev").
func channelName(ch string) string {
	ch = strings.TrimSpace(ch)
	if ch != "" && !strings.Contains(ch, "#") { // "ops" → "#ops"; "team/#ops" stays
		ch = "#" + ch
	}
	return ch
}

// ReadMessagesInput is the input of read_messages.
type ReadMessagesInput struct {
	After    ID     `json:"after,omitempty" jsonschema:"cursor: only newer messages"`
	All      bool   `json:"all,omitempty" jsonschema:"read ones too"`
	Channel  string `json:"channel,omitempty" jsonschema:"only this #channel"`
	Limit    int    `json:"limit,omitempty"`
	MarkRead bool   `json:"mark_read,omitempty" jsonschema:"also mark them read"`
}

// ReadMessagesOutput is what read_messages returns.
type ReadMessagesOutput struct {
	Messages    []Message `json:"messages,omitempty"`
	Cursor      string    `json:"cursor,omitempty"`
	HasMore     bool      `json:"has_more,omitempty"`
	UnreadCount *int64    `json:"unread_count,omitempty"`
}

func readMessagesTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "read_messages",
		Description: "Your messages now, oldest first: unread, or with all every one after the cursor. If has_more, call again with after=cursor.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	shape := func(p map[string]*jsonschema.Schema) { bounds(p["limit"], 1, 100, 20) }
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in ReadMessagesInput) (string, ReadMessagesOutput, error) {
		lreq := &hubv1.ListMessagesRequest{
			AfterId:    string(in.After),
			UnreadOnly: !in.All,
			Limit:      int32(in.Limit),
			Channel:    channelName(in.Channel),
		}
		r, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_ListMessages{ListMessages: lreq}},
			(*hubv1.StreamReply).GetListMessages,
			func() (*hubv1.ListMessagesResponse, error) { return b.client.ListMessages(ctx, lreq) })
		if err != nil {
			return "", ReadMessagesOutput{}, err
		}
		out := ReadMessagesOutput{
			Messages: fromMessages(r.GetMessages()),
			Cursor:   r.GetCursor(),
			HasMore:  r.GetHasMore(),
		}
		if out.Cursor == "" {
			out.Cursor = string(in.After)
			if len(out.Messages) > 0 {
				out.Cursor = newestID(out.Messages)
			}
		}
		if in.MarkRead && len(out.Messages) > 0 {
			// Up to the cursor, not the last message: a reply puts urgent
			// messages first, so its last one need not be its newest.
			mreq := &hubv1.MarkReadRequest{UpToId: out.Cursor}
			mr, err := carried(ctx, b, &hubv1.StreamCall{Call: &hubv1.StreamCall_MarkRead{MarkRead: mreq}},
				(*hubv1.StreamReply).GetMarkRead,
				func() (*hubv1.MarkReadResponse, error) { return b.client.MarkRead(ctx, mreq) })
			if err != nil {
				return "", ReadMessagesOutput{}, err
			}
			n := mr.GetUnreadCount()
			out.UnreadCount = &n
		}
		var sb strings.Builder
		if len(out.Messages) == 0 {
			sb.WriteString("No messages.")
		} else {
			fmt.Fprintf(&sb, "%s:", plural(int64(len(out.Messages)), "message", "messages"))
			renderMessages(&sb, out.Messages)
		}
		if out.HasMore {
			fmt.Fprintf(&sb, "\nMore: call again with after=%s.", out.Cursor)
		}
		if out.UnreadCount != nil {
			fmt.Fprintf(&sb, "\nMarked read; %d unread left.", *out.UnreadCount)
		}
		return sb.String(), out, nil
	})
}

// MarkReadInput is the input of mark_read.
type MarkReadInput struct {
	UpToID ID `json:"up_to_id,omitempty" jsonschema:"last ID to mark; omit for all"`
}

// MarkReadOutput is what mark_read returns.
type MarkReadOutput struct {
	UnreadCount int64  `json:"unread_count"`
	ReadUpToID  string `json:"read_up_to_id,omitempty"`
}

func markReadTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "mark_read",
		Description: "Mark messages read once handled, so counts and waits report only what is new.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in MarkReadInput) (string, MarkReadOutput, error) {
		r, err := b.client.MarkRead(ctx, &hubv1.MarkReadRequest{UpToId: string(in.UpToID)})
		if err != nil {
			return "", MarkReadOutput{}, err
		}
		out := MarkReadOutput{UnreadCount: r.GetUnreadCount(), ReadUpToID: r.GetReadUpToId()}
		return fmt.Sprintf("Read up to %s; %d unread left.", orNone(out.ReadUpToID), out.UnreadCount), out, nil
	})
}
