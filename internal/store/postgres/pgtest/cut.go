package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Link is a TCP forwarder on loopback between a hub and the test
// database, which a test cuts (connections closed, new ones refused) or
// stalls (connections kept open, nothing forwarded: a partition as a
// proxy in the path shows it) to see how the hub behaves, and then
// restores.
type Link struct {
	tb       testing.TB
	addr     string // where the link listens
	upstream string // the database server's host:port

	mu      sync.Mutex
	ln      net.Listener
	conns   []net.Conn
	stalled bool
	resumed *sync.Cond // signalled when a stall ends
}

// Cuttable returns dbURL through a new Link (cut when tb ends) and the
// link.
func Cuttable(tb testing.TB, dbURL string) (string, *Link) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatalf("database URL: %v", err)
	}
	l := &Link{tb: tb, upstream: u.Host}
	l.resumed = sync.NewCond(&l.mu)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l.addr = ln.Addr().String()
	l.serve(ln)
	tb.Cleanup(func() { l.Resume(); l.Cut() })
	u.Host = l.addr
	return u.String(), l
}

func (l *Link) serve(ln net.Listener) {
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", l.upstream)
			if err != nil {
				c.Close()
				continue
			}
			l.mu.Lock()
			l.conns = append(l.conns, c, up)
			l.mu.Unlock()
			go l.pipe(up, c)
			go l.pipe(c, up)
		}
	}()
}

// pipe copies from src to dst, holding what it read while the link is
// stalled.
func (l *Link) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		l.mu.Lock()
		for l.stalled {
			l.resumed.Wait()
		}
		l.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every connection through the link and stops listening: the
// hub's connections break and new ones are refused.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// Restore listens again on the same address after a Cut.
func (l *Link) Restore() {
	l.tb.Helper()
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.tb.Fatalf("restore the link on %s: %v", l.addr, err)
	}
	l.serve(ln)
}

// Stall stops forwarding: every connection stays open and silent, as
// both its ends see a partition behind a proxy.
func (l *Link) Stall() {
	l.mu.Lock()
	l.stalled = true
	l.mu.Unlock()
}

// Resume forwards again what a Stall held, and what follows.
func (l *Link) Resume() {
	l.mu.Lock()
	l.stalled = false
	l.resumed.Broadcast()
	l.mu.Unlock()
}
