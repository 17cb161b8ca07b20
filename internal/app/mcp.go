package app

import (
	"net/http"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/version"
)

// mcpHandler serves MCP over streamable HTTP (mounted at /mcp): each
// session is the agent whose token is in its Authorization header; tool
// calls reach the hub through the in-process connection.
func (m *Main) mcpHandler() http.Handler {
	return mcpbridge.NewHTTPHandlerWithClient(hubv1.NewAgentServiceClient(m.Conn()), mcpbridge.Options{
		HubAddr: m.GRPCAddress(),
		Version: version.Version,
		Logger:  m.Logger.With("component", "mcp"),
	})
}
