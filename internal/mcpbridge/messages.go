package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// PostMessageInput is the input of post_message.
type PostMessageInput struct {
	To       []string `json:"to,omitempty" jsonschema:"agent names to send to directly"`
	Channel  string   `json:"channel,omitempty" jsonschema:"a channel such as #dev (created on first use); give to, channel or both"`
	Body     string   `json:"body" jsonschema:"the message text; @name mentions the agent name"`
	ReplyTo  string   `json:"reply_to,omitempty" jsonschema:"ID of the message you answer (keeps the thread)"`
	Mentions []string `json:"mentions,omitempty" jsonschema:"extra agent names to mention besides @name in the body"`
}

// PostMessageOutput is what post_message returns.
type PostMessageOutput struct {
	ID        string   `json:"id"`
	To        []string `json:"to,omitempty"`
	Channel   string   `json:"channel,omitempty"`
	Mentions  []string `json:"mentions,omitempty"`
	CreatedAt string   `json:"created_at,omitempty"`
}

func postMessageTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[PostMessageInput, PostMessageOutput]) {
	t := &mcp.Tool{
		Name:  "post_message",
		Title: "Post a message",
		Description: "Send a message as yourself to agents (to) and/or a channel (#name). " +
			"Write @name in the body to mention someone (it wakes their wait). " +
			"Set reply_to to answer a message in its thread.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in PostMessageInput) (*mcp.CallToolResult, PostMessageOutput, error) {
		body := strings.TrimSpace(in.Body)
		if body == "" {
			return nil, PostMessageOutput{}, badInput("body is empty: write the message text in body")
		}
		to := cleanNames(in.To)
		channel := strings.TrimSpace(in.Channel)
		if channel != "" && !strings.HasPrefix(channel, "#") {
			channel = "#" + channel
		}
		if len(to) == 0 && channel == "" {
			return nil, PostMessageOutput{}, badInput(`say where the message goes: to (agent names, e.g. ["alice"]) or channel (e.g. "#dev")`)
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, PostMessageOutput{}, err
		}
		r, err := b.client.PostMessage(ctx, &hubv1.PostMessageRequest{
			To:       to,
			Channel:  channel,
			Body:     in.Body,
			ReplyTo:  strings.TrimSpace(in.ReplyTo),
			Mentions: cleanNames(in.Mentions),
		})
		if err != nil {
			return nil, PostMessageOutput{}, b.hubError(err)
		}
		m := r.GetMessage()
		out := PostMessageOutput{
			ID:        m.GetId(),
			To:        m.GetTo(),
			Channel:   m.GetChannel(),
			Mentions:  m.GetMentions(),
			CreatedAt: formatTime(m.GetCreatedAt()),
		}
		var dest []string
		if out.Channel != "" {
			dest = append(dest, out.Channel)
		}
		dest = append(dest, out.To...)
		msg := fmt.Sprintf("Posted message %s to %s.", out.ID, strings.Join(dest, ", "))
		if len(out.Mentions) > 0 {
			msg += " Mentioned: " + strings.Join(out.Mentions, ", ") + "."
		}
		return text(msg), out, nil
	}
	return t, h
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

// ReadMessagesInput is the input of read_messages.
type ReadMessagesInput struct {
	After    string `json:"after,omitempty" jsonschema:"cursor: only messages with a greater ID (use the cursor of a previous reply)"`
	All      bool   `json:"all,omitempty" jsonschema:"include messages already read (default: unread only)"`
	Channel  string `json:"channel,omitempty" jsonschema:"only this channel, e.g. #dev"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many (default 20, max 100)"`
	MarkRead bool   `json:"mark_read,omitempty" jsonschema:"also mark your messages read up to the last one returned"`
}

// ReadMessagesOutput is what read_messages returns.
type ReadMessagesOutput struct {
	Messages    []Message `json:"messages,omitempty"`
	Cursor      string    `json:"cursor,omitempty" jsonschema:"pass as after next time"`
	HasMore     bool      `json:"has_more,omitempty"`
	UnreadCount *int64    `json:"unread_count,omitempty" jsonschema:"unread messages left, when mark_read was set"`
}

const (
	defaultReadLimit = 20
	maxReadLimit     = 100
)

func readMessagesTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[ReadMessagesInput, ReadMessagesOutput]) {
	t := &mcp.Tool{
		Name:  "read_messages",
		Title: "Read messages",
		Description: "Read your messages without waiting: unread ones by default, or all after a cursor. " +
			"Set mark_read to mark them read in the same call (or call mark_read later). " +
			"To sleep until something arrives, use wait_for_messages instead.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in ReadMessagesInput) (*mcp.CallToolResult, ReadMessagesOutput, error) {
		limit := in.Limit
		switch {
		case limit < 0:
			return nil, ReadMessagesOutput{}, badInput("limit must be between 1 and %d", maxReadLimit)
		case limit == 0:
			limit = defaultReadLimit
		case limit > maxReadLimit:
			limit = maxReadLimit
		}
		after := strings.TrimSpace(in.After)
		if !validCursor(after) {
			return nil, ReadMessagesOutput{}, badInput("after %q is not a message ID: pass the cursor of a previous reply (digits)", after)
		}
		channel := strings.TrimSpace(in.Channel)
		if channel != "" && !strings.HasPrefix(channel, "#") {
			channel = "#" + channel
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, ReadMessagesOutput{}, err
		}
		r, err := b.client.ListMessages(ctx, &hubv1.ListMessagesRequest{
			AfterId:    after,
			UnreadOnly: !in.All,
			Limit:      int32(limit),
			Channel:    channel,
		})
		if err != nil {
			return nil, ReadMessagesOutput{}, b.hubError(err)
		}
		out := ReadMessagesOutput{
			Messages: fromMessages(r.GetMessages()),
			Cursor:   r.GetCursor(),
			HasMore:  r.GetHasMore(),
		}
		if out.Cursor == "" {
			out.Cursor = after
			if n := len(out.Messages); n > 0 {
				out.Cursor = out.Messages[n-1].ID
			}
		}
		if in.MarkRead && len(out.Messages) > 0 {
			mr, err := b.client.MarkRead(ctx, &hubv1.MarkReadRequest{UpToId: out.Messages[len(out.Messages)-1].ID})
			if err != nil {
				return nil, ReadMessagesOutput{}, b.hubError(err)
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
		if out.Cursor != "" {
			fmt.Fprintf(&sb, "\ncursor %s", out.Cursor)
		}
		if out.HasMore {
			sb.WriteString(" (more: call again with after=cursor)")
		}
		if out.UnreadCount != nil {
			fmt.Fprintf(&sb, "\nMarked read; %s left.", plural(*out.UnreadCount, "unread message", "unread messages"))
		}
		return text(sb.String()), out, nil
	}
	return t, h
}

// validCursor reports whether s is empty or a decimal message ID.
func validCursor(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return len(s) <= 20
}

// MarkReadInput is the input of mark_read.
type MarkReadInput struct {
	UpToID string `json:"up_to_id,omitempty" jsonschema:"mark every message up to and including this ID read; omit to mark all read"`
}

// MarkReadOutput is what mark_read returns.
type MarkReadOutput struct {
	UnreadCount int64  `json:"unread_count"`
	ReadUpToID  string `json:"read_up_to_id,omitempty"`
}

func markReadTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[MarkReadInput, MarkReadOutput]) {
	t := &mcp.Tool{
		Name:  "mark_read",
		Title: "Mark messages read",
		Description: "Mark your messages read up to an ID (all when omitted) once you have handled them, " +
			"so unread counts and wait_for_messages only report what is new.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in MarkReadInput) (*mcp.CallToolResult, MarkReadOutput, error) {
		upTo := strings.TrimSpace(in.UpToID)
		if !validCursor(upTo) {
			return nil, MarkReadOutput{}, badInput("up_to_id %q is not a message ID (digits); omit it to mark everything read", upTo)
		}
		ctx, err := b.callContext(ctx, req)
		if err != nil {
			return nil, MarkReadOutput{}, err
		}
		r, err := b.client.MarkRead(ctx, &hubv1.MarkReadRequest{UpToId: upTo})
		if err != nil {
			return nil, MarkReadOutput{}, b.hubError(err)
		}
		out := MarkReadOutput{UnreadCount: r.GetUnreadCount(), ReadUpToID: r.GetReadUpToId()}
		return text(fmt.Sprintf("Marked read up to %s; %s left.", orNone(out.ReadUpToID),
			plural(out.UnreadCount, "unread message", "unread messages"))), out, nil
	}
	return t, h
}
