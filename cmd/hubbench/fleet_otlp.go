package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	metrics "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
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

// otlpSession is the recorded session, parsed once.
type otlpSession struct {
	metrics *colmetrics.ExportMetricsServiceRequest
	logs    *collogs.ExportLogsServiceRequest
	start   uint64 // the earliest time in it (Unix ns)
	events  int64  // its events' sequence numbers run from 0 below this
}

func loadOTLPSession() (*otlpSession, error) {
	s := &otlpSession{metrics: &colmetrics.ExportMetricsServiceRequest{}, logs: &collogs.ExportLogsServiceRequest{}}
	for _, x := range []struct {
		path string
		m    proto.Message
	}{{otlpMetricsFixture, s.metrics}, {otlpLogsFixture, s.logs}} {
		b, err := os.ReadFile(x.path)
		if err != nil {
			return nil, fmt.Errorf("--otlp-every reads the recorded exports from the repository (run hubbench from its root): %w", err)
		}
		if err := protojson.Unmarshal(b, x.m); err != nil {
			return nil, fmt.Errorf("%s: %w", x.path, err)
		}
	}
	s.start = ^uint64(0)
	s.shift(func(t *uint64) {
		if *t != 0 {
			s.start = min(s.start, *t)
		}
	}, func(seq *common.AnyValue) { s.events = max(s.events, seq.GetIntValue()+1) })
	return s, nil
}

// shift calls onTime with every timestamp of the session and onSeq with
// every event's sequence number.
func (s *otlpSession) shift(onTime func(*uint64), onSeq func(*common.AnyValue)) {
	for _, rm := range s.metrics.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				switch d := m.GetData().(type) {
				case *metrics.Metric_Sum:
					for _, p := range d.Sum.GetDataPoints() {
						onTime(&p.StartTimeUnixNano)
						onTime(&p.TimeUnixNano)
					}
				case *metrics.Metric_Histogram:
					for _, p := range d.Histogram.GetDataPoints() {
						onTime(&p.StartTimeUnixNano)
						onTime(&p.TimeUnixNano)
					}
				}
			}
		}
	}
	for _, rl := range s.logs.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				onTime(&lr.TimeUnixNano)
				onTime(&lr.ObservedTimeUnixNano)
				for _, kv := range lr.GetAttributes() {
					if kv.GetKey() == "event.sequence" {
						onSeq(kv.GetValue())
					}
				}
			}
		}
	}
}

// export returns the n-th export (from 0) of the session made at now, in
// protobuf: its times moved so that the session ends at now, its events
// numbered after the previous export's.
func (s *otlpSession) export(n int64, now time.Time) (metricsBody, logsBody []byte, err error) {
	c := &otlpSession{metrics: proto.Clone(s.metrics).(*colmetrics.ExportMetricsServiceRequest), logs: proto.Clone(s.logs).(*collogs.ExportLogsServiceRequest)}
	offset := uint64(now.UnixNano()) - s.start - uint64(time.Minute/2)
	c.shift(func(t *uint64) {
		if *t != 0 {
			*t += offset
		}
	}, func(seq *common.AnyValue) {
		seq.Value = &common.AnyValue_IntValue{IntValue: seq.GetIntValue() + n*s.events}
	})
	if metricsBody, err = proto.Marshal(c.metrics); err != nil {
		return nil, nil, err
	}
	logsBody, err = proto.Marshal(c.logs)
	return metricsBody, logsBody, err
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
		m, l, err := f.otlp.export(n, time.Now())
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
