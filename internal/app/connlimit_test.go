package app

import (
	"net"
	"testing"
)

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// fakeConn is a net.Conn whose only use here is to be closed.
type fakeConn struct {
	net.Conn
	remote fakeAddr
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

// open admits a connection from addr (host:port) through l.
func open(l *connLimiter, addr string) (*limitedConn, *fakeConn) {
	fc := &fakeConn{remote: fakeAddr(addr)}
	lc := &limitedConn{Conn: fc, c: l, source: sourceOf(fc.remote)}
	if v := l.admit(lc); v != nil {
		l.evicted.Add(1)
		v.Conn.Close()
	}
	return lc, fc
}

// One source at its own limit churns its own oldest connection; others are untouched.
func TestConnLimiterPerSource(t *testing.T) {
	t.Parallel()
	l := newConnLimiter(ConnLimits{Total: 10, PerSource: 3})
	_, other := open(l, "10.0.0.9:1")
	var attacker []*fakeConn
	for i := range 5 {
		_, fc := open(l, "10.0.0.1:"+string(rune('a'+i)))
		attacker = append(attacker, fc)
	}
	if other.closed {
		t.Error("another source's connection was closed")
	}
	for i, fc := range attacker {
		if want := i < 2; fc.closed != want {
			t.Errorf("attacker connection %d closed = %v, want %v", i, fc.closed, want)
		}
	}
	if got, want := l.Open(), 4; got != want {
		t.Errorf("open = %d, want %d", got, want)
	}
	if got := l.Evicted(); got != 2 {
		t.Errorf("evicted = %d, want 2", got)
	}
}

// At the total limit, a newcomer gets in and the busiest source loses its oldest.
func TestConnLimiterTotal(t *testing.T) {
	t.Parallel()
	l := newConnLimiter(ConnLimits{Total: 4, PerSource: 4})
	_, a1 := open(l, "10.0.0.1:1")
	_, a2 := open(l, "10.0.0.1:2")
	_, a3 := open(l, "10.0.0.1:3")
	_, b1 := open(l, "10.0.0.2:1")
	_, admin := open(l, "10.0.0.3:1") // over the total
	if !a1.closed || a2.closed || a3.closed || b1.closed || admin.closed {
		t.Errorf("closed: a1 %v a2 %v a3 %v b1 %v admin %v; want only a1", a1.closed, a2.closed, a3.closed, b1.closed, admin.closed)
	}
	if got := l.Open(); got != 4 {
		t.Errorf("open = %d, want 4", got)
	}
}

// Closing a connection frees its place once, even when closed twice or after eviction.
func TestConnLimiterRelease(t *testing.T) {
	t.Parallel()
	l := newConnLimiter(ConnLimits{Total: 2, PerSource: 1})
	c1, _ := open(l, "10.0.0.1:1")
	open(l, "10.0.0.1:2") // evicts c1
	c1.Close()
	c1.Close()
	c3, _ := open(l, "10.0.0.2:1")
	if got := l.Open(); got != 2 {
		t.Fatalf("open = %d, want 2", got)
	}
	c3.Close()
	if got := l.Open(); got != 1 {
		t.Errorf("open after close = %d, want 1", got)
	}
}

func TestConnLimitsEffective(t *testing.T) {
	t.Parallel()
	got, err := ConnLimits{Total: 4096, PerSource: 512}.effective(1024)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ConnLimits{Total: 1024 - fdReserve, PerSource: 512}); got != want {
		t.Errorf("effective = %+v, want %+v", got, want)
	}
	if _, err := (ConnLimits{Total: 10, PerSource: 10}).effective(100); err == nil {
		t.Error("a file-descriptor limit of 100 was accepted")
	}
}
