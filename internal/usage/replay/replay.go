// Package replay replays a host's recorded OTLP session (the fixtures of
// internal/usage/testdata) as a stream of exports, each moved to a later
// time so that the hub counts it anew: what `hubbench fleet --otlp-every`
// and the receiver's benchmark send.
package replay

import (
	"fmt"
	"os"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	metrics "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Session is a recorded session of one host: an export of metrics and
// one of log events.
type Session struct {
	metrics *colmetrics.ExportMetricsServiceRequest
	logs    *collogs.ExportLogsServiceRequest
	start   uint64 // its earliest time (Unix ns)
	events  int64  // its events' sequence numbers run from 0 below this
}

// Load reads a session recorded as OTLP JSON: its export of metrics from
// metricsPath, of log events from logsPath.
func Load(metricsPath, logsPath string) (*Session, error) {
	s := &Session{metrics: &colmetrics.ExportMetricsServiceRequest{}, logs: &collogs.ExportLogsServiceRequest{}}
	for _, x := range []struct {
		path string
		m    proto.Message
	}{{metricsPath, s.metrics}, {logsPath, s.logs}} {
		b, err := os.ReadFile(x.path)
		if err != nil {
			return nil, err
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

// Export returns the n-th export (from 0) of the session made at now, in
// protobuf: its times moved so that the session ends at now, its events
// numbered after the previous export's.
func (s *Session) Export(n int64, now time.Time) (metricsBody, logsBody []byte, err error) {
	c := &Session{metrics: proto.Clone(s.metrics).(*colmetrics.ExportMetricsServiceRequest), logs: proto.Clone(s.logs).(*collogs.ExportLogsServiceRequest)}
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

// shift calls onTime with every timestamp of the session and onSeq with
// every event's sequence number.
func (s *Session) shift(onTime func(*uint64), onSeq func(*common.AnyValue)) {
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
