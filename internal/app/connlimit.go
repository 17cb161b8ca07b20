package app

import (
	"container/list"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// ConnLimits bounds the network connections the hub holds, gRPC and HTTP
// together.
type ConnLimits struct {
	Total     int // connections in total (kept below the file-descriptor limit)
	PerSource int // connections from one source IP address
}

// DefaultConnLimits leaves room for many agents per machine while keeping
// one client from holding every connection.
var DefaultConnLimits = ConnLimits{Total: 4096, PerSource: 512}

// fdReserve is the number of file descriptors kept out of the connection
// budget: the store's files, the log, backups, the in-process connection.
const fdReserve = 128

// raiseFDLimit raises the soft file-descriptor limit to the hard one (where
// allowed) and returns the soft limit now in force.
func raiseFDLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("read the file-descriptor limit: %w", err)
	}
	if rl.Cur < rl.Max {
		raised := rl
		raised.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			rl = raised
		}
	}
	return rl.Cur, nil
}

// effective returns the limits to apply under a soft file-descriptor limit
// of fds: the total stays fdReserve below it.
func (l ConnLimits) effective(fds uint64) (ConnLimits, error) {
	if fds <= fdReserve+16 {
		return l, fmt.Errorf("the file-descriptor limit (%d) leaves no room for connections: raise it (ulimit -n) above %d", fds, fdReserve+16)
	}
	if budget := int(min(fds-fdReserve, 1<<30)); l.Total > budget {
		l.Total = budget
	}
	l.PerSource = min(l.PerSource, l.Total)
	return l, nil
}

// Validate checks the limits.
func (l ConnLimits) Validate() error {
	if l.Total < 1 || l.PerSource < 1 {
		return fmt.Errorf("connection limits must be at least 1 (--max-conns %d, --max-conns-per-source %d)", l.Total, l.PerSource)
	}
	return nil
}

// connLimiter holds the hub's connections by source address. Past a limit
// the new connection still gets in and an old one is closed: the oldest of
// the same source when that source is at its own limit, else the oldest of
// the source holding the most. A client that opens connections without end
// only churns its own, and a newcomer from another address — an admin, a
// health probe — always gets in.
type connLimiter struct {
	limits ConnLimits

	mu       sync.Mutex
	bySource map[string]*list.List // of *limitedConn, oldest first
	total    int

	evicted atomic.Int64
}

func newConnLimiter(l ConnLimits) *connLimiter {
	return &connLimiter{limits: l, bySource: map[string]*list.List{}}
}

// Open returns the number of connections held now.
func (c *connLimiter) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Evicted returns the number of connections closed to make room.
func (c *connLimiter) Evicted() int64 { return c.evicted.Load() }

// listen wraps l so that its connections count against c.
func (c *connLimiter) listen(l net.Listener) net.Listener { return &limitedListener{Listener: l, c: c} }

func sourceOf(addr net.Addr) string {
	if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		return host
	}
	return addr.String()
}

// admit records conn and returns the connection to close to make room, if any.
func (c *connLimiter) admit(conn *limitedConn) *limitedConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	var victim *limitedConn
	own := c.bySource[conn.source]
	switch {
	case own != nil && own.Len() >= c.limits.PerSource:
		victim = c.removeLocked(own.Front())
	case c.total >= c.limits.Total:
		var heaviest *list.List
		for _, l := range c.bySource {
			if heaviest == nil || l.Len() > heaviest.Len() {
				heaviest = l
			}
		}
		if heaviest != nil {
			victim = c.removeLocked(heaviest.Front())
		}
	}
	if own = c.bySource[conn.source]; own == nil {
		own = list.New()
		c.bySource[conn.source] = own
	}
	conn.elem = own.PushBack(conn)
	c.total++
	return victim
}

// removeLocked forgets the connection in e and returns it.
func (c *connLimiter) removeLocked(e *list.Element) *limitedConn {
	conn := e.Value.(*limitedConn)
	l := c.bySource[conn.source]
	l.Remove(e)
	if l.Len() == 0 {
		delete(c.bySource, conn.source)
	}
	conn.elem = nil
	c.total--
	return conn
}

func (c *connLimiter) release(conn *limitedConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn.elem != nil {
		c.removeLocked(conn.elem)
	}
}

type limitedListener struct {
	net.Listener
	c *connLimiter
}

func (l *limitedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: conn, c: l.c, source: sourceOf(conn.RemoteAddr())}
	if victim := l.c.admit(lc); victim != nil {
		l.c.evicted.Add(1)
		victim.Conn.Close()
	}
	return lc, nil
}

type limitedConn struct {
	net.Conn
	c      *connLimiter
	source string
	elem   *list.Element // guarded by c.mu; nil once released
	once   sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.c.release(c) })
	return c.Conn.Close()
}
