package app

import (
	"fmt"
	"net"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// What one gRPC connection may take. Unauthenticated calls are refused from
// their headers (server.TapHandle), so these bound what an authenticated or
// half-open client can hold.
const (
	maxStreamsPerConn = 1024 // concurrent calls on one connection; more queue at the client
	// streamWorkers is how many goroutines gRPC keeps to run calls on: a
	// call taken by a worker runs on a stack already grown by the calls
	// before it, instead of a new goroutine that grows its stack by
	// copying. With every worker busy (parked waits hold theirs), a call
	// gets a goroutine of its own, as without workers.
	streamWorkers  = 64
	maxHeaderBytes = 16 << 10 // a call's metadata
	// readBuffer is what each connection keeps to read its frames into:
	// a call's frames are a few hundred bytes (its headers are mostly
	// indexes into the connection's HPACK table after the first call), and
	// a larger frame is read past the buffer. gRPC's 32 KiB default, kept
	// by every connection for its life (its pooled reads need the bare TCP
	// connection, and ours is wrapped by the connection limiter), was a
	// third of an idle agent's share of the hub; 4 KiB was still 4 of the
	// 14 KiB of heap an idle connection held (BenchmarkConnectionMemory).
	readBuffer = 1 << 10
	// writeBuffer is how much of a connection's frames gRPC gathers before
	// a write: a buffer taken from a pool shared by the connections while
	// they write, which holds as many as wrote at once (a channel's post
	// wakes fifty streams together) until collections empty it. A frame
	// is a few hundred bytes; gRPC's 32 KiB default kept ~3 MiB of pooled
	// buffers live in a fleet of 2,000.
	writeBuffer = 8 << 10
	// headerTable is the dynamic HPACK table the hub lets each client fill
	// with the headers it sends (SETTINGS_HEADER_TABLE_SIZE): none. A
	// client then sends a call's few headers whole, which the hub decodes
	// once per call; gRPC's 4 KiB default kept every connection's token,
	// user agent and paths, ~0.6 KiB each, for the connection's life.
	headerTable = 0
	// streamWindow and connWindow are the flow-control windows: how much
	// of a call's request a client may send before the hub reads it, per
	// call and per connection. Fixed, they turn off gRPC's bandwidth
	// estimation, which grows a busy connection's window up to 16 MiB of
	// data the hub may have to hold; a request is at most 4 MiB
	// (MaxRecvMsgSize) and a message body 1 MiB, and the handler reads a
	// request as it arrives.
	streamWindow = 64 << 10
	connWindow   = 1 << 20
	// maxIdleConn closes a gRPC connection with no call in flight for this
	// long; clients reconnect transparently.
	maxIdleConn = 5 * time.Minute
)

// guardOptions are the gRPC server options that bound what one client can
// take from the hub: the transport's, and the admission of each call.
func (m *Main) guardOptions() []grpc.ServerOption {
	return append(TransportOptions(), grpc.InTapHandle(m.Server.TapHandle))
}

// TransportOptions are the gRPC server options of the hub's transport:
// what one connection holds and may send (streams, buffers, windows,
// keep-alive). `hub bench-floor` serves with them too, to measure what the
// transport alone costs.
func TransportOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(maxStreamsPerConn),
		grpc.NumStreamWorkers(streamWorkers),
		grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.ReadBufferSize(readBuffer),
		grpc.WriteBufferSize(writeBuffer),
		grpc.HeaderTableSize(headerTable),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.ConnectionTimeout(10 * time.Second),
		// Parked waits are idle streams: let clients keep connections open
		// with pings, and probe dead peers so their waits are freed.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, MaxConnectionIdle: maxIdleConn}),
	}
}

// startConnLimiter raises the file-descriptor limit where allowed and sets
// up the connection limiter the gRPC and HTTP listeners share.
func (m *Main) startConnLimiter() error {
	if err := m.ConnLimits.Validate(); err != nil {
		return err
	}
	fds, err := raiseFDLimit()
	if err != nil {
		return err
	}
	limits, err := m.ConnLimits.effective(fds)
	if err != nil {
		return err
	}
	if limits.Total < m.ConnLimits.Total {
		m.Logger.Warn("the file-descriptor limit lowers the connection limit", "fd_limit", fds, "max_conns", limits.Total)
	}
	m.conns = newConnLimiter(limits)
	m.metrics.GaugeFunc("connections_open", "Network connections held (gRPC and HTTP).", func() float64 { return float64(m.conns.Open()) })
	m.metrics.CounterFunc("refusal_logs_dropped_total", "Log lines of refused calls (no or unknown token, no permission, over a limit) left out by sampling.", func() float64 {
		if m.Server == nil {
			return 0
		}
		return float64(m.Server.RefusalLog().Dropped())
	})
	m.metrics.CounterFunc("connections_evicted_total", "Connections closed to make room under --max-conns and --max-conns-per-source.", func() float64 { return float64(m.conns.Evicted()) })
	return nil
}

// listen listens on addr with the connection limiter.
func (m *Main) listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if m.conns == nil {
		return nil, fmt.Errorf("listen on %s: the connection limiter is not set up", addr)
	}
	return m.conns.listen(l), nil
}

// checkLimits refuses message limits the hub cannot honour: one message
// must fit in a reply (hub.MaxBodyLimit).
func (m *Main) checkLimits() error {
	if n := m.Config.MaxBodyBytes; n < 1 || n > hub.MaxBodyLimit {
		return fmt.Errorf("--max-body %d: give 1-%d bytes (one message must fit in a reply)", n, hub.MaxBodyLimit)
	}
	if n := m.Config.MaxMentions; n < 1 || n > 10000 {
		return fmt.Errorf("--max-mentions %d: give 1-10000", n)
	}
	return nil
}
