package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync/atomic"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// transport is how a simulated agent speaks to the hub.
type transport int

const (
	transportGRPC   transport = iota // its own gRPC connection
	transportHTTP                    // MCP over streamable HTTP at /mcp
	transportStdio                   // MCP through its own `hub mcp` process
	transportStream                  // its own gRPC connection, holding Subscribe instead of waits
	nTransports
)

func (t transport) String() string {
	return [...]string{"gRPC", "MCP /mcp", "hub mcp", "gRPC stream"}[t]
}

// waitReply is what an agent learns from one wait.
type waitReply struct {
	cursor   string
	ids      []string // the messages it carried
	timedOut bool
}

// agentAPI is the part of the agent API the fleet's agents use, over one
// transport. Hooks always go over gRPC (hub hook is a gRPC client).
type agentAPI interface {
	heartbeat(ctx context.Context) error
	activityLog(ctx context.Context, typ, title string) error
	checkpoint(ctx context.Context, text string) error
	startDeepWork(ctx context.Context, mode, text string, minutes int) error
	post(ctx context.Context, to []string, channel, body string) (id string, err error)
	wait(ctx context.Context, after string) (waitReply, error)
	markRead(ctx context.Context, upTo string) error
	// connect (re)opens what the agent holds (its connection, its MCP
	// session); close drops it, as an agent that goes offline does.
	connect(ctx context.Context) error
	close()
}

// waitSeconds is what a gRPC agent's wait asks for: the hub's cap. MCP
// agents use the tool's default (45 s), as MCP clients do.
const waitSeconds = 60

// grpcAgent is an agent with its own gRPC connection, from its own
// loopback source address (the hub limits connections per address).
type grpcAgent struct {
	addr   string
	source net.IP
	ref    *agentRef
	conn   atomic.Pointer[grpc.ClientConn]
	// calls carries the agent's heartbeats, marks and hooks' injections on
	// the stream it holds (subscribe), as hub mcp does.
	calls streamCalls
}

// dialFrom returns an agent's own connection to addr, from the loopback
// source address source.
func dialFrom(addr string, source net.IP) (*grpc.ClientConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: source}, Timeout: 10 * time.Second}
	// Fixed windows, as hub mcp's (mcpbridge.Dial): no bandwidth
	// estimation's ping after each wake.
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(4<<20), grpc.WithInitialConnWindowSize(4<<20),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }))
}

func (g *grpcAgent) connect(context.Context) error {
	conn, err := dialFrom(g.addr, g.source)
	if err != nil {
		return err
	}
	conn.Connect()
	if old := g.conn.Swap(conn); old != nil {
		old.Close()
	}
	return nil
}

func (g *grpcAgent) close() {
	if c := g.conn.Swap(nil); c != nil {
		c.Close()
	}
}

func (g *grpcAgent) client() (hubv1.AgentServiceClient, error) {
	c := g.conn.Load()
	if c == nil {
		return nil, fmt.Errorf("%s is offline", g.ref.name)
	}
	return hubv1.NewAgentServiceClient(c), nil
}

func (g *grpcAgent) do(ctx context.Context, f func(context.Context, hubv1.AgentServiceClient) error) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	return f(g.ref.authed(ctx), c)
}

func (g *grpcAgent) heartbeat(ctx context.Context) error {
	req := &hubv1.HeartbeatRequest{}
	return g.carried(ctx, &hubv1.StreamCall{Call: &hubv1.StreamCall_Heartbeat{Heartbeat: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.Heartbeat(ctx, req)
		return err
	})
}

// carried makes call on the agent's stream, or alone (by the agent's
// connection) when its stream does not take it, as hub mcp does.
func (g *grpcAgent) carried(ctx context.Context, call *hubv1.StreamCall, alone func(context.Context, hubv1.AgentServiceClient) error) error {
	if _, err := g.calls.call(ctx, call); !errors.Is(err, errNoStream) {
		return err
	}
	return g.do(ctx, alone)
}

func (g *grpcAgent) activityLog(ctx context.Context, typ, title string) error {
	return g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.CreateActivityLog(ctx, &hubv1.CreateActivityLogRequest{Type: typ, Title: title, Content: []string{"notes on " + title}})
		return err
	})
}

func (g *grpcAgent) checkpoint(ctx context.Context, text string) error {
	return g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.Checkpoint(ctx, checkpointReq(text))
		return err
	})
}

func (g *grpcAgent) startDeepWork(ctx context.Context, mode, text string, minutes int) error {
	return g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.StartDeepWork(ctx, &hubv1.StartDeepWorkRequest{Mode: mode, PlannedActivity: text, PlannedMinutes: int32(minutes)})
		return err
	})
}

func (g *grpcAgent) post(ctx context.Context, to []string, channel, body string) (id string, err error) {
	err = g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		r, err := c.PostMessage(ctx, &hubv1.PostMessageRequest{To: to, Channel: channel, Body: body})
		id = r.GetMessage().GetId()
		return err
	})
	return id, err
}

func (g *grpcAgent) wait(ctx context.Context, after string) (w waitReply, err error) {
	secs := int32(waitSeconds)
	err = g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		r, err := c.WaitForMessages(ctx, &hubv1.WaitForMessagesRequest{TimeoutSeconds: &secs, AfterId: after})
		if err != nil {
			return err
		}
		w = waitReply{cursor: r.GetCursor(), timedOut: r.GetTimedOut()}
		for _, m := range r.GetMessages() {
			w.ids = append(w.ids, m.GetId())
		}
		return nil
	})
	return w, err
}

// subscribe holds one stream of the agent's wake-ups for the channel path,
// as hub mcp does, after cursor after, and hands each frame's messages and
// cursor to frame as they arrive, with confirm, which says on the stream
// that messages reached the agent's context, as hub mcp does once it has
// pushed them; it returns when the stream ends (nil after a resync frame:
// subscribe again from its cursor).
func (g *grpcAgent) subscribe(ctx context.Context, after string, frame func(ids []string, cursor string, at time.Time, confirm func([]string) error)) error {
	return g.do(ctx, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		// As hub mcp's, the stream has no deadline (the hub would hold a
		// timer for it): it ends when ctx does.
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		st, err := c.Subscribe(sctx)
		if err == nil {
			err = st.Send(&hubv1.SubscribeRequest{AfterId: after, Via: "channel"})
		}
		if err != nil && err != io.EOF { // io.EOF: the hub ended the stream, Recv says why
			return err
		}
		defer g.calls.detach(st)
		confirm := func(ids []string) error { return g.calls.sendOn(st, &hubv1.SubscribeRequest{ConfirmIds: ids}) }
		for first := true; ; first = false {
			f, err := st.Recv()
			if err != nil {
				return err
			}
			if first && f.GetCalls() {
				g.calls.attach(st, f.GetMoreCalls())
			}
			if r := f.GetReply(); r != nil {
				g.calls.deliver(r)
				continue
			}
			at := time.Now()
			var ids []string
			for _, m := range f.GetMessages() {
				ids = append(ids, m.GetId())
			}
			frame(ids, f.GetCursor(), at, confirm)
			if f.GetResync() {
				return nil
			}
		}
	})
}

func (g *grpcAgent) markRead(ctx context.Context, upTo string) error {
	req := &hubv1.MarkReadRequest{UpToId: upTo}
	return g.carried(ctx, &hubv1.StreamCall{Call: &hubv1.StreamCall_MarkRead{MarkRead: req}}, func(ctx context.Context, c hubv1.AgentServiceClient) error {
		_, err := c.MarkRead(ctx, req)
		return err
	})
}

func checkpointReq(text string) *hubv1.CheckpointRequest {
	return &hubv1.CheckpointRequest{CurrentActivity: text}
}

func adminPostReq(to, body string) *hubv1.PostMessageRequest {
	return &hubv1.PostMessageRequest{To: []string{to}, Body: body}
}

// sourceAddr is the loopback source address of agent i: perSource agents
// per address, from 127.1.0.1 on.
func sourceAddr(i, perSource int) net.IP {
	n := i/perSource + 1
	return net.IPv4(127, 1, byte(n>>8), byte(n))
}

func haveTaskset() bool {
	_, err := exec.LookPath("taskset")
	return err == nil
}
