package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// The fault proxy: Shopify's toxiproxy, run in this process (it runs in
// the clients' namespace, on the proxy's address). Every client's gRPC
// connection to replica i goes through the proxy "client-ri"; the
// database connections of every replica but the first go through
// "pg-ri" (the first reaches PostgreSQL directly, so that a partition
// of it is one PostgreSQL itself sees). Toxics (latency, bandwidth,
// timeout, reset_peer) are added to a proxy's both directions and removed
// whole when the fault heals.
type proxies struct {
	mu     sync.Mutex
	server *toxiproxy.ApiServer
	byName map[string]*toxiproxy.Proxy
}

func newProxies() *proxies {
	zerolog.SetGlobalLevel(zerolog.Disabled) // the toxics log every link they cut
	return &proxies{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop()),
		byName: map[string]*toxiproxy.Proxy{},
	}
}

// clientPort and pgProxyPort are the proxy's listening ports for replica i.
func clientPort(i int) int  { return 8000 + i }
func pgProxyPort(i int) int { return 5400 + i }

// clientProxy names the proxy of the clients' link to replica i.
func clientProxy(i int) string { return fmt.Sprintf("client-r%d", i) }

// pgProxy names the proxy of replica i's link to PostgreSQL ("" for the
// first replica, which connects directly).
func pgProxy(i int) string {
	if i == 1 {
		return ""
	}
	return fmt.Sprintf("pg-r%d", i)
}

// add starts a proxy from listen to upstream.
func (x *proxies) add(name, listen, upstream string) error {
	p := toxiproxy.NewProxy(x.server, name, listen, upstream)
	if err := p.Start(); err != nil {
		return fmt.Errorf("proxy %s on %s: %w", name, listen, err)
	}
	x.mu.Lock()
	x.byName[name] = p
	x.mu.Unlock()
	return nil
}

// toxic is one toxic of a fault, added in both directions.
type toxic struct {
	Type       string         `json:"type"`
	Attributes map[string]int `json:"attributes"`
}

func (t toxic) String() string {
	var parts []string
	for k, v := range t.Attributes {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	return t.Type + "(" + strings.Join(parts, ",") + ")"
}

// poison adds t to both directions of the proxy named name.
func (x *proxies) poison(name string, t toxic) error {
	x.mu.Lock()
	p := x.byName[name]
	x.mu.Unlock()
	if p == nil {
		return fmt.Errorf("no proxy %q", name)
	}
	for _, stream := range []string{"upstream", "downstream"} {
		b, _ := json.Marshal(map[string]any{
			"name": "fault-" + stream, "type": t.Type, "stream": stream, "toxicity": 1.0, "attributes": t.Attributes,
		})
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
			return fmt.Errorf("toxic %s on %s: %w", t, name, err)
		}
	}
	return nil
}

// cure removes every toxic of the proxy named name.
func (x *proxies) cure(name string) {
	x.mu.Lock()
	p := x.byName[name]
	x.mu.Unlock()
	if p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.Toxics.ResetToxics(ctx)
		cancel()
	}
}

// stop stops every proxy and closes its connections.
func (x *proxies) stop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.byName {
		p.Stop()
	}
}

// waitListening waits until a TCP listener answers at addr.
func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
