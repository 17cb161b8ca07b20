package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Link is a TCP forwarder on loopback between a hub and the test
// database, which a test cuts to see how the hub behaves when its
// database cannot be reached, and restores.
type Link struct {
	tb       testing.TB
	addr     string // where the link listens
	upstream string // the database server's host:port

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// Cuttable returns dbURL through a new Link (closed when tb ends) and the
// link.
func Cuttable(tb testing.TB, dbURL string) (string, *Link) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatalf("database URL: %v", err)
	}
	l := &Link{tb: tb, upstream: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l.addr = ln.Addr().String()
	l.serve(ln)
	tb.Cleanup(l.Cut)
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
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
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

// Restore listens again on the same address.
func (l *Link) Restore() {
	l.tb.Helper()
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.tb.Fatalf("restore the link on %s: %v", l.addr, err)
	}
	l.serve(ln)
}
