// Package mcpbridge exposes the hub's agent API as MCP tools.
//
// One function per tool returns the tool and its handler; each handler
// calls the hub through a hubv1.AgentServiceClient and never touches the
// store. The same tools are served two ways:
//
//   - RunStdio: `hub mcp`, one process per agent, speaking MCP over stdio and
//     calling the hub with that agent's token;
//   - NewHTTPHandlerWithClient: MCP over streamable HTTP at /mcp inside the hub, where
//     each session's identity is the Authorization: Bearer header and the
//     client calls the gRPC handlers in process (internal/inproc).
//
// The hub takes the caller's identity from the token only: no tool has an
// argument naming the agent.
package mcpbridge

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
)

// Defaults for Options.
const (
	// DefaultWait is wait_for_messages' timeout when the caller gives none:
	// below the 60 s default request time-out of the TypeScript MCP SDK and
	// several clients, so the answer arrives before the client gives up.
	DefaultWait = 45 * time.Second
	// MaxWait is the longest wait_for_messages parks; larger values are clamped.
	MaxWait = 60 * time.Second
	// DefaultProgressInterval is how often a parked wait sends a progress
	// notification when the client gave a progress token.
	DefaultProgressInterval = 10 * time.Second
	// DefaultSessionTimeout closes idle streamable HTTP sessions: well
	// above the longest wait, so a client that waits in a loop keeps its
	// session, and short enough that abandoned ones go soon.
	DefaultSessionTimeout = 5 * time.Minute
	// DefaultMaxSessionsPerToken bounds the streamable HTTP sessions one
	// token holds; opening one more closes the oldest.
	DefaultMaxSessionsPerToken = 16
)

// Options configures the MCP server. The zero value is usable.
type Options struct {
	// HubAddr is the hub's gRPC address, named in "cannot reach the hub"
	// errors so the user knows what to start or fix.
	HubAddr string
	// Version is reported to MCP clients as the server version.
	Version string
	// DefaultWait is wait_for_messages' timeout when none is given
	// (default DefaultWait). It is capped at MaxWait.
	DefaultWait time.Duration
	// ProgressInterval is how often a parked wait_for_messages sends a
	// progress notification (default DefaultProgressInterval).
	ProgressInterval time.Duration
	// SessionTimeout closes streamable HTTP sessions idle this long
	// (default DefaultSessionTimeout). Unused over stdio.
	SessionTimeout time.Duration
	// MaxSessionsPerToken bounds the streamable HTTP sessions one token
	// holds (default DefaultMaxSessionsPerToken); past it the oldest session
	// is closed. Unused over stdio.
	MaxSessionsPerToken int
	// Channel pushes each new message, nudge and pulse for the agent as a
	// Claude Code channel notification (notifications/claude/channel) while
	// the stdio session is open, and declares the experimental
	// "claude/channel" capability. Unused over HTTP.
	Channel bool
	// HookSocket is the local socket (hooksock.Path) where the bridge
	// answers its agent's hooks (hub hook) while the stdio session is
	// open; "" opens none. Unused over HTTP.
	HookSocket string
	// HookOutput is what a hook of the agent prints for event of host given
	// what the hub answered it (HookAnswer), and the IDs of the messages it
	// shows (hook.Output; ok false: no such event). With it the bridge
	// answers such a hook itself, what the hook would ask the hub asked on
	// its stream; nil: those hooks ask the hub.
	HookOutput func(host, event string, a HookAnswer) (stdout string, shown []string, ok bool)
	// Gate checks the agent token of each streamable HTTP request that
	// opens a session or carries no token, with the hub's refusal texts;
	// nil lets every token open a session (each tool call is still
	// checked by the hub). Unused over stdio.
	Gate *admission.Gate
	// Clock is the bridge's time: its waits, retries, sessions and what
	// its agent's hooks are told (nil: the system clock).
	Clock hub.Clock
	// Logger receives the bridge's own diagnostics; nil discards them.
	// Over stdio it must not write to stdout.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.DefaultWait <= 0 {
		o.DefaultWait = DefaultWait
	}
	if o.DefaultWait > MaxWait {
		o.DefaultWait = MaxWait
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessionsPerToken <= 0 {
		o.MaxSessionsPerToken = DefaultMaxSessionsPerToken
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = hub.SystemClock{}
	}
	return o
}

// bridge is what every tool handler shares.
type bridge struct {
	client hubv1.AgentServiceClient
	opts   Options
	// callContext returns the context for the gRPC calls made on behalf of
	// req. Over stdio the credentials live on the connection and ctx is
	// returned as is; over HTTP it attaches the session's bearer token.
	callContext func(ctx context.Context, req *mcp.CallToolRequest) (context.Context, error)
	// initialized, when set, runs once the client has sent
	// notifications/initialized, with what it said in its initialize.
	initialized func(*mcp.InitializeParams)
	// pushing is set once channel notifications go to the client.
	pushing atomic.Bool
	// known is what the bridge knows of the agent at the hub, for its
	// hooks; nil over HTTP.
	known *known
	// calls carries waits, reads and heartbeats on the stream of
	// wake-ups the bridge holds; nil over HTTP, whose calls are in process.
	calls *streamCalls
	// approvals holds a place for each of its hooks' approvals the stream
	// carries (carriedApprovals); nil: none is carried.
	approvals chan struct{}
}

// carried makes call on the bridge's stream of wake-ups (streamCalls) and
// returns its reply (reply picks it out); without a stream that carries
// it to its end, the call is made alone (alone).
func carried[R any](ctx context.Context, b *bridge, call *hubv1.StreamCall, reply func(*hubv1.StreamReply) R, alone func() (R, error)) (R, error) {
	if b.calls == nil {
		return alone()
	}
	r, err := b.calls.call(ctx, call)
	switch {
	case errors.Is(err, errNoStream):
		return alone()
	case err != nil:
		var none R
		return none, err
	}
	return reply(r), nil
}

// NewServer returns an MCP server whose tools call the hub through client.
// The client must carry the agent's credentials (see Dial); every call is
// made as that agent.
func NewServer(client hubv1.AgentServiceClient, opts Options) *mcp.Server {
	return newServer(&bridge{client: client, opts: opts.withDefaults()})
}

func newServer(b *bridge) *mcp.Server {
	if b.callContext == nil {
		b.callContext = func(ctx context.Context, _ *mcp.CallToolRequest) (context.Context, error) {
			return ctx, nil
		}
	}
	sopts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       b.opts.Logger,
	}
	if b.opts.Channel {
		sopts.Capabilities = &mcp.ServerCapabilities{
			Logging:      &mcp.LoggingCapabilities{}, // the SDK's default, kept
			Experimental: map[string]any{channelCapability: map[string]any{}},
		}
		sopts.Instructions += channelInstructions
	}
	if b.initialized != nil {
		sopts.InitializedHandler = func(_ context.Context, req *mcp.InitializedRequest) {
			var params *mcp.InitializeParams
			if req != nil && req.Session != nil {
				params = req.Session.InitializeParams()
			}
			b.initialized(params)
		}
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    "agent-hub",
		Title:   "Agent Hub",
		Version: b.opts.Version,
	}, sopts)

	s.AddReceivingMiddleware(nullArguments)
	for _, add := range tools {
		add(s, b)
	}

	s.AddResource(guidelinesResource())
	for _, p := range prompts() {
		s.AddPrompt(p.prompt, p.handler)
	}
	return s
}

// tools adds every tool, in the order tools/list shows them.
var tools = []func(*mcp.Server, *bridge){
	heartbeatTool,
	checkHubStatusTool,
	postMessageTool,
	readMessagesTool,
	markReadTool,
	acknowledgeMessageTool,
	waitForMessagesTool,
	listAgentsTool,
	listChannelsTool,
	joinChannelTool,
	createActivityLogTool,
	checkpointTool,
	startDeepWorkTool,
	getHeartbeatElapsedTimeTool,
	respondToPulseTool,
	reservePathsTool,
	releasePathsTool,
	listReservationsTool,
	searchMessagesTool,
	listTasksTool,
	claimTaskTool,
	nextTaskTool,
	completeTaskTool,
	blockTaskTool,
	askHumanTool,
}

// boolPtr returns a pointer to v, for tool annotations.
func boolPtr(v bool) *bool { return &v }
