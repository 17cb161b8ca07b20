package mcpbridge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// SearchMessagesInput is the input of search_messages.
type SearchMessagesInput struct {
	Query   string `json:"query"`
	Author  string `json:"author,omitempty" jsonschema:"sent by"`
	Channel string `json:"channel,omitempty"`
	Since   string `json:"since,omitempty" jsonschema:"RFC 3339"`
	MinPrio string `json:"min_priority,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Page    string `json:"page,omitempty"`
}

// SearchHit is one message search_messages found: the message without its
// body, and the best-matching fragment of the body.
type SearchHit struct {
	ID         string   `json:"id"`
	From       string   `json:"from"`
	SenderKind string   `json:"sender_kind"` // agent, person, admin or hub: who sent it, whatever the body claims
	To         []string `json:"to,omitempty"`
	Channel    string   `json:"channel,omitempty"`
	ReplyTo    string   `json:"reply_to,omitempty"`
	CreatedAt  string   `json:"created_at,omitempty"`
	Snippet    string   `json:"snippet"`
}

// SearchMessagesOutput is what search_messages returns.
type SearchMessagesOutput struct {
	Hits []SearchHit `json:"hits,omitempty"`
	Next string      `json:"next_page,omitempty"`
}

func searchMessagesTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "search_messages",
		Description: `Search messages you received: all the words (stemmed) or "phrases"; best first.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	shape := func(p map[string]*jsonschema.Schema) { enum(p["min_priority"], priorityNames...) }
	addTool(s, b, t, shape, func(ctx context.Context, _ *mcp.CallToolRequest, in SearchMessagesInput) (string, SearchMessagesOutput, error) {
		since, err := optionalTime("since", in.Since)
		if err != nil {
			return "", SearchMessagesOutput{}, err
		}
		var minPrio hubv1.Priority
		if in.MinPrio != "" {
			if minPrio, err = toPriority(in.MinPrio); err != nil {
				return "", SearchMessagesOutput{}, err
			}
		}
		r, err := b.client.SearchMessages(ctx, &hubv1.SearchMessagesRequest{
			Query: in.Query, From: strings.TrimPrefix(strings.TrimSpace(in.Author), "@"), Channel: channelName(in.Channel),
			Since: since, Limit: int32(in.Limit), PageToken: in.Page, MinPriority: minPrio,
		})
		if err != nil {
			return "", SearchMessagesOutput{}, err
		}
		out := SearchMessagesOutput{Next: r.GetNextPageToken()}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s:", plural(int64(len(r.GetHits())), "hit", "hits"))
		for _, h := range r.GetHits() {
			m := h.GetMessage()
			hit := SearchHit{
				ID: m.GetId(), From: m.GetFrom(), SenderKind: SenderKind(m), To: m.GetTo(), Channel: m.GetChannel(),
				ReplyTo: m.GetReplyTo(), CreatedAt: formatTime(m.GetCreatedAt()), Snippet: h.GetSnippet(),
			}
			out.Hits = append(out.Hits, hit)
			dest := hit.Channel
			if dest == "" {
				dest = strings.Join(hit.To, ", ")
			}
			fmt.Fprintf(&sb, "\n[%s] %s → %s, %s: %s", hit.ID, label(hit.From, hit.SenderKind), dest, hit.CreatedAt, hit.Snippet)
		}
		if out.Next != "" {
			fmt.Fprintf(&sb, "\nMore: call again with page=%s.", out.Next)
		}
		return sb.String(), out, nil
	})
}

// optionalTime parses an RFC 3339 time input; "" is unset.
func optionalTime(field, s string) (*timestamppb.Timestamp, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, badInput("%s %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", field, s)
	}
	return timestamppb.New(tm), nil
}
