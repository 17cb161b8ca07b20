package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agenthub/hub/internal/usage/replay"
)

// The exporters of `hubbench fleet --otlp-every`: each agent's host sends
// its telemetry to the hub's OTLP receiver, as Claude Code set up by `hub
// setup claude` does (OTLP/HTTP protobuf, the agent's token as Bearer):
// every period one export of metrics and one of log events, each the
// recorded session of internal/usage/testdata (two model requests, a tool
// run, 29 events) moved to the time of the export, so that the hub counts
// each export anew.

// otlpFixtures are the recorded exports the exporters send, read from the
// repository hubbench runs in.
const (
	otlpMetricsFixture = "internal/usage/testdata/claude_metrics.json"
	otlpLogsFixture    = "internal/usage/testdata/claude_logs.json"
)

func loadOTLPSession() (*replay.Session, error) {
	s, err := replay.Load(otlpMetricsFixture, otlpLogsFixture)
	if err != nil {
		return nil, fmt.Errorf("--otlp-every reads the recorded exports from the repository (run hubbench from its root): %w", err)
	}
	return s, nil
}

// otlpClients are the exporters' HTTP clients, one per loopback source
// address (as the agents' gRPC connections are).
type otlpClients map[string]*http.Client

func (cs otlpClients) get(source net.IP) *http.Client {
	c := cs[source.String()]
	if c == nil {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: source}, Timeout: 10 * time.Second}
		c = &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 5 * time.Minute}}
		cs[source.String()] = c
	}
	return c
}

// exportLoop sends the agent's telemetry every period until ctx ends, the
// first at a random phase (the fleet's hosts do not export in step).
func (a *fleetAgent) exportLoop(ctx context.Context, f *fleet, client *http.Client) {
	every := f.c.otlpEvery
	rng := rand.New(rand.NewPCG(f.c.seed, uint64(a.i)+1<<32))
	next := time.Now().Add(time.Duration(rng.Float64() * float64(every)))
	base := "http://" + f.hub.httpAddr + "/otlp/v1/"
	for n := int64(0); sleepUntil(ctx, next); n++ {
		m, l, err := f.otlp.Export(n, time.Now())
		if err == nil {
			err = postOTLP(ctx, client, base+"metrics", a.ref.token, m)
		}
		if err == nil {
			err = postOTLP(ctx, client, base+"logs", a.ref.token, l)
		}
		if ctx.Err() != nil {
			return
		}
		f.stats.call(opExport, 0, err)
		next = next.Add(every)
	}
}

func postOTLP(ctx context.Context, c *http.Client, url, token string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}
