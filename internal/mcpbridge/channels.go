package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// ChannelInput is the input of join_channel.
type ChannelInput struct {
	Channel string `json:"channel" jsonschema:"#name"`
	Leave   bool   `json:"leave,omitempty"`
}

// ChannelOutput is what join_channel returns.
type ChannelOutput struct {
	Channel string   `json:"channel"`
	Members []string `json:"members,omitempty"`
}

func joinChannelTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "join_channel",
		Description: "Join a #channel (created on first use): its messages reach you and wake your wait. leave: stop them (mentions still reach you).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), IdempotentHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, in ChannelInput) (string, ChannelOutput, error) {
		if in.Leave {
			r, err := b.client.LeaveChannel(ctx, &hubv1.LeaveChannelRequest{Channel: channelName(in.Channel)})
			if err != nil {
				return "", ChannelOutput{}, err
			}
			out := ChannelOutput{Channel: r.GetChannel()}
			return "Left " + out.Channel + ".", out, nil
		}
		r, err := b.client.JoinChannel(ctx, &hubv1.JoinChannelRequest{Channel: channelName(in.Channel)})
		if err != nil {
			return "", ChannelOutput{}, err
		}
		out := ChannelOutput{Channel: r.GetChannel(), Members: r.GetMembers()}
		return fmt.Sprintf("Joined %s (members: %s).", out.Channel, strings.Join(out.Members, ", ")), out, nil
	})
}

// ChannelInfo is one channel as list_channels returns it.
type ChannelInfo struct {
	Name        string `json:"name"`
	MemberCount int64  `json:"member_count"`
	Joined      bool   `json:"joined,omitempty"`
}

// ListChannelsOutput is what list_channels returns.
type ListChannelsOutput struct {
	Channels []ChannelInfo `json:"channels"`
}

func listChannelsTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "list_channels",
		Description: "Channels: member counts, whether you are in each.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (string, ListChannelsOutput, error) {
		r, err := b.client.ListChannels(ctx, &hubv1.ListChannelsRequest{})
		if err != nil {
			return "", ListChannelsOutput{}, err
		}
		out := ListChannelsOutput{Channels: []ChannelInfo{}}
		var sb strings.Builder
		for _, c := range r.GetChannels() {
			ci := ChannelInfo{Name: c.GetName(), MemberCount: c.GetMemberCount(), Joined: c.GetJoined()}
			out.Channels = append(out.Channels, ci)
			fmt.Fprintf(&sb, "\n%s: %s", ci.Name, plural(ci.MemberCount, "member", "members"))
			if ci.Joined {
				sb.WriteString(", you are in it")
			}
		}
		if len(out.Channels) == 0 {
			return "No channels yet: post_message to #name or join_channel creates one.", out, nil
		}
		return plural(int64(len(out.Channels)), "channel", "channels") + ":" + sb.String(), out, nil
	})
}
