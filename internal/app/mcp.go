package app

import (
	"net/http"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/version"
)

// mcpHandler serves MCP over streamable HTTP (mounted at /mcp): each
// session is the agent whose token is in its Authorization header; tool
// calls run the gRPC handlers in process (inproc), through the same
// interceptors as a gRPC call: authentication, rate limits, error mapping,
// logging and metrics. Its sessions are counted in /metrics, and an
// agent's end when its token is revoked (after their parked calls have
// answered).
func (m *Main) mcpHandler() http.Handler {
	h := mcpbridge.NewHTTPHandlerWithClient(hubv1.NewAgentServiceClient(m.direct), mcpbridge.Options{
		HubAddr: m.GRPCAddress(),
		Version: version.Version(),
		Gate:    m.Gate,
		Logger:  m.Logger.With("component", "mcp"),
	})
	m.parked.OnRevoke(func(who hub.Principal) {
		if who.AgentID != 0 {
			h.EndAgent(who.AgentID)
		}
	})
	m.metrics.GaugeFunc("mcp_sessions", "MCP streamable HTTP sessions open.", func() float64 { return float64(h.Sessions()) })
	m.metrics.CounterFunc("mcp_sessions_evicted_total", "MCP HTTP sessions closed because their token opened more than the per-token limit.", func() float64 { return float64(h.SessionsEvicted()) })
	return h
}
