package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// replyWindow is the bridge's flow-control window per call and per
// connection: gRPC's default largest message.
const replyWindow = 4 << 20

// Dial returns a lazily connecting gRPC client connection to the hub at
// addr. It does not wait for the hub: calls made while the hub is down fail
// with Unavailable, and the connection recovers on its own (within about a
// second) once the hub is back. It talks TLS when the hub's CA is stored
// for addr (castore), else plain text. When token is not empty every call carries
// it as "authorization: Bearer <token>".
func Dial(addr, token string) (*grpc.ClientConn, error) {
	creds, err := transportCredentials(addr)
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  100 * time.Millisecond,
				Multiplier: 1.6,
				Jitter:     0.2,
				MaxDelay:   time.Second,
			},
			MinConnectTimeout: 2 * time.Second,
		}),
		grpc.WithUserAgent("hub-mcp"),
		// Fixed windows turn off gRPC's bandwidth estimation, which answers
		// each frame received after a quiet spell (a wake-up) with a window
		// update and a ping: a read and a write more for the hub per wake.
		// A window of the largest reply gRPC takes (4 MiB) lets any reply
		// flow without waiting for an update.
		grpc.WithInitialWindowSize(replyWindow),
		grpc.WithInitialConnWindowSize(replyWindow),
		grpc.WithChainUnaryInterceptor(markUnreachable),
	}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken(token)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial hub %s: %w", addr, err)
	}
	return conn, nil
}

// markUnreachable marks an Unavailable answer that came while the
// connection to the hub was not up: the hub could not be reached, as
// against a hub that answered that it cannot serve the call now (its store
// unreachable or full, the hub shutting down).
func markUnreachable(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if status.Code(err) == codes.Unavailable && cc.GetState() != connectivity.Ready {
		return &unreachableError{err: err}
	}
	return err
}

// unreachableError is a call's Unavailable error that came from no hub.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// bearerToken sends an agent token with every call. It does not require
// transport security: the bridge talks to the hub over loopback, where grpc
// would otherwise refuse to send the credentials.
type bearerToken string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (bearerToken) RequireTransportSecurity() bool { return false }

// ErrNoToken is returned by tools when the bridge was started without a token.
var ErrNoToken = errors.New("no agent token: set HUB_TOKEN (or --token) to the token printed by `hubctl agent add NAME`, then restart the MCP server")

// RunStdio serves MCP over stdin/stdout for one agent until the client
// disconnects or ctx ends, calling the hub at addr with token. It returns
// nil when the client closes the session. The hub need not be running yet:
// tools answer with an error naming addr until it is.
func RunStdio(ctx context.Context, addr, token string, opts Options) error {
	return Run(ctx, &lineTransport{r: pollableStdin(), w: os.Stdout}, addr, token, opts)
}

// pollableStdin returns stdin for the Go runtime's network poller when it
// is a pipe or a socket (as when an MCP client starts the bridge), by
// putting it in non-blocking mode while the bridge reads it. A read that
// waits then parks its goroutine, where a blocking read would hold a
// thread and its processor in a system call between messages, which the
// runtime's monitor must take back (it polls every 20 µs for that while
// the bridge works, about a tenth of its CPU). Other stdin (a terminal, a
// file) is read as it is.
func pollableStdin() io.ReadCloser {
	var st syscall.Stat_t
	if err := syscall.Fstat(stdinFD, &st); err != nil {
		return os.Stdin
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return os.Stdin
	}
	if err := syscall.SetNonblock(stdinFD, true); err != nil {
		return os.Stdin
	}
	return nonblockingStdin{os.NewFile(stdinFD, "/dev/stdin")}
}

const stdinFD = 0

// nonblockingStdin is stdin in non-blocking mode. Close puts it back in
// blocking mode first: the mode belongs to the pipe, which others may
// hold.
type nonblockingStdin struct{ *os.File }

// Close implements io.Closer.
func (f nonblockingStdin) Close() error {
	_ = syscall.SetNonblock(stdinFD, false) // closing matters more
	return f.File.Close()
}

// Run is RunStdio over any transport (tests use in-memory or pipe
// transports).
func Run(ctx context.Context, t mcp.Transport, addr, token string, opts Options) error {
	conn, err := Dial(addr, token)
	if err != nil {
		return err
	}
	defer conn.Close()
	if opts.HubAddr == "" {
		opts.HubAddr = addr
	}
	b := &bridge{client: hubv1.NewAgentServiceClient(conn), opts: opts.withDefaults()}
	b.known = newKnown(b.opts.Clock.Now, func() bool { return conn.GetState() == connectivity.Ready })
	if opts.HookSocket != "" && token != "" {
		defer b.serveHooks(opts.HookSocket, token)()
	}
	if token == "" {
		b.callContext = func(context.Context, *mcp.CallToolRequest) (context.Context, error) {
			return nil, ErrNoToken
		}
	}
	if token != "" {
		// The bridge follows the agent's messages for its hooks (known):
		// pushing them to a client that shows channel notifications,
		// else on a watch stream, which carries no message.
		p := &pusher{client: b.client, opts: b.opts, known: b.known}
		b.calls = &p.calls
		if opts.Channel {
			pt := &pushTransport{Transport: t}
			t = pt
			p.send = pt.notify
		}
		pctx, cancel := context.WithCancel(ctx)
		ready, done := make(chan struct{}), make(chan struct{})
		var once sync.Once
		b.initialized = func(params *mcp.InitializeParams) {
			once.Do(func() {
				// Only a client that shows channel notifications gets
				// them: another drops them, and the hub would count
				// the messages in context although no model saw them.
				if p.send != nil && takesChannel(params) {
					b.pushing.Store(true)
				} else {
					p.send = nil
				}
				close(ready)
			})
		}
		go func() {
			defer close(done)
			select {
			case <-ready:
				p.run(pctx)
			case <-pctx.Done():
			}
		}()
		// The pushes stop before Run returns and the connection is gone.
		defer func() { cancel(); <-done }()
	}
	err = newServer(b).Run(ctx, t)
	if err == nil || errors.Is(err, context.Canceled) {
		if token != "" {
			b.endSession(ctx)
		}
		return nil
	}
	return fmt.Errorf("mcp session: %w", err)
}

// claudeCodeClient is the name Claude Code gives itself in its
// initialize (clientInfo.name).
const claudeCodeClient = "claude-code"

// takesChannel reports whether the client reads channel notifications:
// Claude Code, which reads them from a server that declares the
// claude/channel capability, or a client that declares that capability
// itself. Codex, Gemini CLI and the SDKs' clients drop them.
func takesChannel(p *mcp.InitializeParams) bool {
	if p == nil {
		return false
	}
	if p.ClientInfo != nil && p.ClientInfo.Name == claudeCodeClient {
		return true
	}
	if p.Capabilities != nil {
		if _, ok := p.Capabilities.Experimental[channelCapability]; ok {
			return true
		}
	}
	return false
}

// endSession tells the hub that the session ended cleanly (the client
// closed it, or the bridge was stopped): the agent shows offline at once,
// and the channel path, if the bridge pushed, stops counting as live.
func (b *bridge) endSession(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	req := &hubv1.EndSessionRequest{}
	if b.pushing.Load() {
		req.Via = viaChannel
	}
	if _, err := b.client.EndSession(ctx, req); err != nil {
		b.opts.Logger.Debug("mcp: end the agent's session", "err", err)
	}
}
