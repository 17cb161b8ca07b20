package usage

import (
	"reflect"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// TestPrunedExportsReadTheSame: every recorded export of every host, as
// protobuf, reads the same pruned as whole (the same usage, rate limits
// and tools), twice in a row (what a resend finds), while the pruning
// leaves out the events, the attributes of events and the metric data
// the hub does not read, and the resources left with nothing it reads.
func TestPrunedExportsReadTheSame(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"claude_logs.json", "codex_logs.json", "gemini_logs.json", "ratelimit_logs.json"} {
		pb, err := proto.Marshal(logsFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		whole, pruned := NewMeter(), NewMeter()
		for i := range 2 {
			w := &collogs.ExportLogsServiceRequest{}
			if err := proto.Unmarshal(pb, w); err != nil {
				t.Fatal(err)
			}
			p := &collogs.ExportLogsServiceRequest{}
			if err := decode(pb, encProto, pruneLogs, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want, got := whole.Logs(1, w), pruned.Logs(1, p); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, export %d: pruned reads %+v, whole %+v", name, i, got, want)
			}
			if i == 0 && name == "claude_logs.json" {
				if n, m := records(p), records(w); n != 4 || m != 29 {
					t.Errorf("%s: %d of %d records kept, want the 4 that say usage or tools", name, n, m)
				}
				if n, m := len(p.GetResourceLogs()), len(w.GetResourceLogs()); n != 3 || m != 7 {
					t.Errorf("%s: %d of %d resources kept, want the 3 with records kept", name, n, m)
				}
				for _, rl := range p.GetResourceLogs() {
					kvs := rl.GetResource().GetAttributes()
					for _, sl := range rl.GetScopeLogs() {
						for _, lr := range sl.GetLogRecords() {
							kvs = append(kvs, lr.GetAttributes()...)
						}
					}
					for _, kv := range kvs {
						if !readKeys[kv.GetKey()] {
							t.Errorf("%s: attribute %q kept, want only those the hub reads", name, kv.GetKey())
						}
					}
				}
			}
		}
	}
	for _, name := range []string{"claude_metrics.json", "codex_metrics.json", "gemini_metrics.json", "genai_metrics.json"} {
		pb, err := proto.Marshal(metricsFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		whole, pruned := NewMeter(), NewMeter()
		for i := range 2 {
			w := &colmetrics.ExportMetricsServiceRequest{}
			if err := proto.Unmarshal(pb, w); err != nil {
				t.Fatal(err)
			}
			p := &colmetrics.ExportMetricsServiceRequest{}
			if err := decode(pb, encProto, func(b []byte) ([]byte, error) { return pruneMetrics(b, nil) }, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want, got := whole.Metrics(1, w), pruned.Metrics(1, p); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, export %d: pruned reads %+v, whole %+v", name, i, got, want)
			}
			if i == 0 && name == "claude_metrics.json" {
				if n, m := len(p.GetResourceMetrics()), len(w.GetResourceMetrics()); n != 2 || m != 4 {
					t.Errorf("%s: %d of %d resources kept, want the 2 with metrics of usage", name, n, m)
				}
			}
		}
	}
}

func records(req *collogs.ExportLogsServiceRequest) (n int) {
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			n += len(sl.GetLogRecords())
		}
	}
	return n
}

// TestPruneMalformed: a protobuf export whose fields do not parse is
// refused, pruned or not.
func TestPruneMalformed(t *testing.T) {
	t.Parallel()
	pb, err := proto.Marshal(logsFixture(t, "claude_logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{{0xff, 0xff, 0xff}, pb[:len(pb)-3], {0x0a, 0x05, 0x12, 0x10}} {
		if err := decode(body, encProto, pruneLogs, &collogs.ExportLogsServiceRequest{}); err == nil {
			t.Errorf("% x…: decoded, want an error", body[:min(len(body), 8)])
		}
		if err := decode(body, encProto, func(b []byte) ([]byte, error) { return pruneMetrics(b, nil) }, &colmetrics.ExportMetricsServiceRequest{}); err == nil {
			t.Errorf("% x… as metrics: decoded, want an error", body[:min(len(body), 8)])
		}
	}
}

// TestPruneKeepsEveryPlaceOfAName: a record keeps whatever place names its
// event (its event_name, its body, its event.name attribute, its
// resource's), with or without the host's prefix; a record that names no
// event the hub reads goes, whatever else its attributes say.
func TestPruneKeepsEveryPlaceOfAName(t *testing.T) {
	t.Parallel()
	str := func(s string) *common.AnyValue {
		return &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: s}}
	}
	kv := func(k, v string) *common.KeyValue { return &common.KeyValue{Key: k, Value: str(v)} }
	req := &collogs.ExportLogsServiceRequest{ResourceLogs: []*logs.ResourceLogs{
		{Resource: &resource.Resource{Attributes: []*common.KeyValue{kv("service.name", "codex")}},
			ScopeLogs: []*logs.ScopeLogs{{LogRecords: []*logs.LogRecord{
				{EventName: "codex.tool_result"},
				{Body: str("claude_code.api_error")},
				{Attributes: []*common.KeyValue{kv("event.name", "sse_event")}},
				{Attributes: []*common.KeyValue{kv("event.name", "user_prompt"), kv("prompt", "api_request tool_result")}},
				{Body: str("hook_registered")},
			}}}},
		{Resource: &resource.Resource{Attributes: []*common.KeyValue{kv("event.name", "tool_decision")}},
			ScopeLogs: []*logs.ScopeLogs{{LogRecords: []*logs.LogRecord{{Body: str("hook_registered")}}}}},
	}}
	pb, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := &collogs.ExportLogsServiceRequest{}
	if err := decode(pb, encProto, pruneLogs, got); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, rl := range got.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				kept = append(kept, lr.GetEventName()+lr.GetBody().GetStringValue()+merge(nil, lr.GetAttributes()).str("event.name"))
			}
		}
	}
	if want := []string{"codex.tool_result", "claude_code.api_error", "sse_event", "hook_registered"}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
}

func points(req *colmetrics.ExportMetricsServiceRequest) (n int) {
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				n += len(m.GetSum().GetDataPoints()) + len(m.GetHistogram().GetDataPoints())
			}
		}
	}
	return n
}

// TestPrunedMetricsOfEventSessions: once a session's events count its
// usage, its metrics' data points are pruned on the wire before the
// export is decoded, and the export reads the same as whole (nothing);
// the points of a session without events, and of one the Meter cannot
// tell from the wire, are kept and counted.
func TestPrunedMetricsOfEventSessions(t *testing.T) {
	t.Parallel()
	read := func(m *Meter, req *colmetrics.ExportMetricsServiceRequest) (Report, int) {
		t.Helper()
		pb, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		events := m.eventSessions(1)
		p := &colmetrics.ExportMetricsServiceRequest{}
		if err := decode(pb, encProto, func(b []byte) ([]byte, error) { return pruneMetrics(b, events) }, p); err != nil {
			t.Fatal(err)
		}
		return m.metrics(1, p, events), points(p)
	}
	for _, host := range []string{"claude", "codex", "gemini"} {
		whole, pruned := NewMeter(), NewMeter()
		whole.Logs(1, logsFixture(t, host+"_logs.json"))
		pruned.Logs(1, logsFixture(t, host+"_logs.json"))
		req := metricsFixture(t, host+"_metrics.json")
		want := whole.Metrics(1, req)
		got, n := read(pruned, req)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: pruned reads %+v, whole %+v", host, got, want)
		}
		if n != 0 {
			t.Errorf("%s: %d data points of %d kept of the session its events count, want none", host, n, points(req))
		}
	}
	m := NewMeter()
	m.Logs(1, logsFixture(t, "claude_logs.json"))
	if rep, n := read(m, sumPoint("sess-metrics-only", 1, 1764619200000000000, 1764619260000000000, 70)); inputOf(rep) != 70 || n != 1 {
		t.Errorf("a session without events: %d points kept, %d input counted; want 1 and 70", n, inputOf(rep))
	}
	inResource := mustMetrics(`{"resourceMetrics":[{"resource":{"attributes":[{"key":"session.id","value":{"stringValue":"5256ddc3-88dd-4a61-a81d-447ef2ba77e0"}}]},
		"scopeMetrics":[{"metrics":[{"name":"claude_code.token.usage","sum":{"aggregationTemporality":1,"dataPoints":[
		{"attributes":[{"key":"type","value":{"stringValue":"input"}}],"timeUnixNano":"1764619260000000000","asDouble":5}]}}]}]}]}`)
	if rep, n := read(m, inResource); len(rep.Deltas) != 0 || n != 0 {
		t.Errorf("a point of the events' session named by its resource: %d points kept, %+v counted; want none", n, rep.Deltas)
	}
	numbered := mustMetrics(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"claude_code.token.usage","sum":{"aggregationTemporality":1,"dataPoints":[
		{"attributes":[{"key":"session.id","value":{"intValue":"7"}},{"key":"type","value":{"stringValue":"input"}}],"timeUnixNano":"1764619260000000000","asDouble":5}]}}]}]}]}`)
	if rep, n := read(m, numbered); inputOf(rep) != 5 || n != 1 {
		t.Errorf("a session named by a number: %d points kept, %d input counted; want 1 and 5", n, inputOf(rep))
	}
}
