package mcpbridge_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/app"
	"github.com/agenthub/hub/internal/mcpbridge"
)

// testHub is a real hub (SQLite in a temp dir, gRPC and HTTP on port 0).
type testHub struct {
	*app.Main
	admin hubv1.AdminServiceClient
	token string // admin token
}

func startHub(tb testing.TB, configure ...func(*app.Main)) *testHub {
	tb.Helper()
	m := app.NewMain()
	m.DataDir = tb.TempDir()
	m.GRPCAddr = "127.0.0.1:0"
	m.HTTPAddr = "127.0.0.1:0"
	m.Logger = slog.New(slog.DiscardHandler)
	m.NoOrchestrator = true
	for _, c := range configure {
		c(m)
	}
	if err := m.Start(context.Background()); err != nil {
		tb.Fatalf("start hub: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	tok, err := m.AdminToken()
	if err != nil {
		tb.Fatalf("admin token: %v", err)
	}
	return &testHub{Main: m, admin: hubv1.NewAdminServiceClient(m.Conn()), token: tok}
}

func (h *testHub) adminCtx() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+h.token)
}

// createAgent registers an agent and returns its token.
func (h *testHub) createAgent(tb testing.TB, name string) string {
	tb.Helper()
	r, err := h.admin.CreateAgent(h.adminCtx(), &hubv1.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatalf("create agent %s: %v", name, err)
	}
	return r.GetToken()
}

// parkedWaiters is the hub's count of parked WaitForMessages calls.
func (h *testHub) parkedWaiters(tb testing.TB) int64 {
	tb.Helper()
	r, err := h.admin.GetHubInfo(h.adminCtx(), &hubv1.GetHubInfoRequest{})
	if err != nil {
		tb.Fatalf("GetHubInfo: %v", err)
	}
	return r.GetParkedWaiters()
}

// restartableHub reserves a loopback port and returns it with a function
// that starts a hub there on one data dir: call it again after Close to
// restart the hub with its data.
func restartableHub(tb testing.TB) (addr string, start func() *testHub) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	dir := tb.TempDir()
	return addr, func() *testHub {
		m := app.NewMain()
		m.DataDir = dir
		m.GRPCAddr = addr
		m.HTTPAddr = "off"
		m.Logger = slog.New(slog.DiscardHandler)
		m.NoOrchestrator = true
		if err := m.Start(context.Background()); err != nil {
			tb.Skipf("could not start a hub on %s: %v", addr, err)
		}
		h := &testHub{Main: m, admin: newAdmin(m)}
		h.token, _ = m.AdminToken()
		return h
	}
}

// bridge runs the stdio bridge's code path (Dial with the token over real
// gRPC to addr) over an in-memory MCP transport, and returns a connected
// client session.
func bridge(tb testing.TB, addr, token string, opts mcpbridge.Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	tb.Helper()
	return bridgeOver(tb, addr, token, opts, copts, func(t mcp.Transport) mcp.Transport { return t }, nil)
}

// bridgeOver is bridge with the client's transport wrapped by wrap and
// session options sopts.
func bridgeOver(tb testing.TB, addr, token string, opts mcpbridge.Options, copts *mcp.ClientOptions, wrap func(mcp.Transport) mcp.Transport, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpbridge.Run(ctx, st, addr, token, opts) }()
	// Claude Code's name: the client that reads channel notifications.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code"}, copts).Connect(ctx, wrap(ct), sopts)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// httpSession opens a streamable HTTP session to url with token.
func httpSession(tb testing.TB, url, token string, copts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	tb.Helper()
	client := &http.Client{Transport: bearerTransport{token: token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-http"}, copts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { cs.Close() })
	return cs, nil
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and decodes its structured output into out (if not
// nil). It fails the test on a protocol error; tool errors are returned.
func call(tb testing.TB, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	tb.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: protocol error: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			tb.Fatalf("%s: marshal structured content: %v", name, err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return res
}

// mustCall is call that fails the test on a tool error too.
func mustCall(tb testing.TB, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	tb.Helper()
	res := call(tb, cs, name, args, out)
	if res.IsError {
		tb.Fatalf("%s(%v): tool error: %s", name, args, resultText(res))
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func eventuallyTrue(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isCode reports whether err carries the gRPC code c.
func isCode(err error, c codes.Code) bool { return status.Code(err) == c }

func newAdmin(m *app.Main) hubv1.AdminServiceClient { return hubv1.NewAdminServiceClient(m.Conn()) }

func agentClient(h *testHub) hubv1.AgentServiceClient { return hubv1.NewAgentServiceClient(h.Conn()) }

// newLoopbackServer serves handler on 127.0.0.1 and returns its base URL.
func newLoopbackServer(tb testing.TB, handler http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(handler)
	tb.Cleanup(srv.Close)
	return srv.URL
}
