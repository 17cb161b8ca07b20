package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// AgentInfo is one agent as list_agents returns it.
type AgentInfo struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name,omitempty"`
	Role        string `json:"role,omitempty"`
	Description string `json:"description,omitempty"`
	Presence    string `json:"presence"` // active, waiting, idle or offline
	LastSeenAt  string `json:"last_seen_at,omitempty"`
	// Reachable: a message reaches it within a minute; Paths names the
	// live ones (wait, channel, hook, tmux).
	Reachable bool     `json:"reachable"`
	Paths     []string `json:"paths,omitempty"`
}

// ListAgentsOutput is what list_agents returns.
type ListAgentsOutput struct {
	Agents []AgentInfo `json:"agents"`
}

func listAgentsTool(s *mcp.Server, b *bridge) {
	t := &mcp.Tool{
		Name:        "list_agents",
		Description: "Agents you can message: role, presence (waiting = in wait_for_messages) and whether a message reaches them now.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	addTool(s, b, t, nil, func(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (string, ListAgentsOutput, error) {
		r, err := b.client.ListPeers(ctx, &hubv1.ListPeersRequest{})
		if err != nil {
			return "", ListAgentsOutput{}, err
		}
		out := ListAgentsOutput{Agents: []AgentInfo{}}
		var sb strings.Builder
		for _, p := range r.GetPeers() {
			a := AgentInfo{
				Name:        p.GetName(),
				DisplayName: p.GetDisplayName(),
				Role:        p.GetRole(),
				Description: p.GetDescription(),
				Presence:    p.GetPresence(),
				LastSeenAt:  formatTime(p.GetLastSeenAt()),
				Reachable:   p.GetReachable(),
			}
			for _, path := range p.GetPaths() {
				if path.GetLive() {
					a.Paths = append(a.Paths, path.GetKind())
				}
			}
			out.Agents = append(out.Agents, a)
			fmt.Fprintf(&sb, "\n%s", a.Name)
			if a.Role != "" {
				fmt.Fprintf(&sb, " (%s)", a.Role)
			}
			fmt.Fprintf(&sb, ": %s", a.Presence)
			if a.Reachable {
				fmt.Fprintf(&sb, ", reachable (%s)", strings.Join(a.Paths, ", "))
			} else {
				sb.WriteString(", not reachable now (a message waits for its next session)")
			}
		}
		return plural(int64(len(out.Agents)), "agent", "agents") + ":" + sb.String(), out, nil
	})
}
