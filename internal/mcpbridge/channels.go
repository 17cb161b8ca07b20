package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// ChannelInput is the input of join_channel and leave_channel.
type ChannelInput struct {
	Channel string `json:"channel" jsonschema:"the channel, such as #dev (the # may be left out)"`
}

// ChannelOutput is what join_channel and leave_channel return.
type ChannelOutput struct {
	Channel string   `json:"channel"`
	Members []string `json:"members,omitempty"`
}

// channelArg normalises a channel argument ("dev" → "#dev").
func channelArg(in ChannelInput) (string, error) {
	ch := strings.TrimSpace(in.Channel)
	if ch == "" {
		return "", badInput(`channel is empty: give a channel such as "#dev"`)
	}
	if !strings.HasPrefix(ch, "#") {
		ch = "#" + ch
	}
	return ch, nil
}

func joinChannelTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[ChannelInput, ChannelOutput]) {
	t := &mcp.Tool{
		Name:  "join_channel",
		Title: "Join a channel",
		Description: "Subscribe to a channel (#name, created on first use) so its messages reach you " +
			"and wake your wait_for_messages. Posting to a channel joins it too.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in ChannelInput) (*mcp.CallToolResult, ChannelOutput, error) {
		ch, err := channelArg(in)
		if err != nil {
			return nil, ChannelOutput{}, err
		}
		if ctx, err = b.callContext(ctx, req); err != nil {
			return nil, ChannelOutput{}, err
		}
		r, err := b.client.JoinChannel(ctx, &hubv1.JoinChannelRequest{Channel: ch})
		if err != nil {
			return nil, ChannelOutput{}, b.hubError(err)
		}
		out := ChannelOutput{Channel: r.GetChannel(), Members: r.GetMembers()}
		return text(fmt.Sprintf("Joined %s (members: %s).", out.Channel, strings.Join(out.Members, ", "))), out, nil
	}
	return t, h
}

func leaveChannelTool(b *bridge) (*mcp.Tool, mcp.ToolHandlerFor[ChannelInput, ChannelOutput]) {
	t := &mcp.Tool{
		Name:        "leave_channel",
		Title:       "Leave a channel",
		Description: "Unsubscribe from a channel: its new messages stop reaching you (mentions of you still do).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest, in ChannelInput) (*mcp.CallToolResult, ChannelOutput, error) {
		ch, err := channelArg(in)
		if err != nil {
			return nil, ChannelOutput{}, err
		}
		if ctx, err = b.callContext(ctx, req); err != nil {
			return nil, ChannelOutput{}, err
		}
		r, err := b.client.LeaveChannel(ctx, &hubv1.LeaveChannelRequest{Channel: ch})
		if err != nil {
			return nil, ChannelOutput{}, b.hubError(err)
		}
		out := ChannelOutput{Channel: r.GetChannel()}
		return text("Left " + out.Channel + "."), out, nil
	}
	return t, h
}
