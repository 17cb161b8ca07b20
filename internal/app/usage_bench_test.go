package app_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/app"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	metricsv1 "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// BenchmarkOTLPExport is the hub's work on one export of a Claude Code
// host, as `hubbench fleet --otlp-every` sends it: the recorded session
// of internal/usage/testdata (metrics, then its events) posted as
// protobuf over HTTP/1.1 keep-alive on loopback by 100 agents' hosts, 8
// at a time, to a hub on a SQLite file, rate limits off, each export the
// session moved to a later time so that it counts anew. It reports the
// process's CPU time per export (cpu-µs/export: two posts, the hub's work
// and the clients', which run in this process; the bodies are made
// before the clock starts), from getrusage; its allocations are the
// process's too.
//
//	go test -run '^$' -bench BenchmarkOTLPExport -benchtime 2000x -count 5 ./internal/app/
func BenchmarkOTLPExport(b *testing.B) {
	m := relHub(b, func(m *app.Main) {
		m.RateLimit = admission.RateLimit{}
		m.ReadLimit = admission.RateLimit{}
	})
	const agents, senders = 100, 8
	tokens := make([]string, agents)
	for i := range tokens {
		tokens[i] = relCreateAgent(b, m, fmt.Sprintf("coder-%d", i))
	}
	s := loadSession(b)
	type export struct {
		token         string
		metrics, logs []byte
	}
	exports := make([]export, b.N+agents)
	start := time.Now().Add(-time.Duration(len(exports)/agents+1) * time.Minute)
	for i := range exports {
		n := int64(i / agents)
		e := export{token: tokens[i%agents]}
		e.metrics, e.logs = s.export(b, n, start.Add(time.Duration(n)*time.Minute))
		exports[i] = e
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	base := "http://" + m.HTTPAddress() + "/otlp/v1/"
	post := func(path, token string, body []byte) error {
		req, err := http.NewRequest("POST", base+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: HTTP %d: %s", path, resp.StatusCode, got)
		}
		return nil
	}
	send := func(e export) error {
		if err := post("metrics", e.token, e.metrics); err != nil {
			return err
		}
		return post("logs", e.token, e.logs)
	}
	// Each host's first export takes back what its metrics counted before
	// its events came: the steady state is what follows.
	for _, e := range exports[:agents] {
		if err := send(e); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	next.Store(agents - 1)
	b.SetParallelism(max(1, senders/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := send(exports[next.Add(1)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/export")
}

// session is the recorded Claude Code session the exports are made of.
type session struct {
	metrics *colmetrics.ExportMetricsServiceRequest
	logs    *collogs.ExportLogsServiceRequest
	start   uint64 // its earliest time (Unix ns)
	events  int64  // its events' sequence numbers run from 0 below this
}

func loadSession(tb testing.TB) *session {
	s := &session{metrics: &colmetrics.ExportMetricsServiceRequest{}, logs: &collogs.ExportLogsServiceRequest{}}
	for _, x := range []struct {
		name string
		m    proto.Message
	}{{"claude_metrics.json", s.metrics}, {"claude_logs.json", s.logs}} {
		raw, err := os.ReadFile("../usage/testdata/" + x.name)
		if err != nil {
			tb.Fatal(err)
		}
		if err := protojson.Unmarshal(raw, x.m); err != nil {
			tb.Fatal(err)
		}
	}
	s.start = ^uint64(0)
	s.each(func(t *uint64) {
		if *t != 0 {
			s.start = min(s.start, *t)
		}
	}, func(seq int64) int64 { s.events = max(s.events, seq+1); return seq })
	return s
}

// each calls onTime with every timestamp of the session, and sets every
// event's sequence number to what onSeq returns of it.
func (s *session) each(onTime func(*uint64), onSeq func(int64) int64) {
	for _, rm := range s.metrics.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, mt := range sm.GetMetrics() {
				switch d := mt.GetData().(type) {
				case *metricsv1.Metric_Sum:
					for _, p := range d.Sum.GetDataPoints() {
						onTime(&p.StartTimeUnixNano)
						onTime(&p.TimeUnixNano)
					}
				case *metricsv1.Metric_Histogram:
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
						kv.GetValue().Value = &commonv1.AnyValue_IntValue{IntValue: onSeq(kv.GetValue().GetIntValue())}
					}
				}
			}
		}
	}
}

// export returns the n-th export (from 0) of the session made at now, in
// protobuf: its times moved so that the session ends at now, its events
// numbered after the previous export's.
func (s *session) export(tb testing.TB, n int64, now time.Time) (metrics, logs []byte) {
	c := &session{metrics: proto.Clone(s.metrics).(*colmetrics.ExportMetricsServiceRequest), logs: proto.Clone(s.logs).(*collogs.ExportLogsServiceRequest)}
	offset := uint64(now.UnixNano()) - s.start - uint64(time.Minute/2)
	c.each(func(t *uint64) {
		if *t != 0 {
			*t += offset
		}
	}, func(seq int64) int64 { return seq + n*s.events })
	metrics, err := proto.Marshal(c.metrics)
	if err != nil {
		tb.Fatal(err)
	}
	if logs, err = proto.Marshal(c.logs); err != nil {
		tb.Fatal(err)
	}
	return metrics, logs
}
