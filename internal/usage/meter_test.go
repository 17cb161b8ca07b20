package usage

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func metricsFixture(t *testing.T, name string) *colmetrics.ExportMetricsServiceRequest {
	t.Helper()
	req := &colmetrics.ExportMetricsServiceRequest{}
	if err := decode(readFixture(t, name), encJSON, req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}

func logsFixture(t *testing.T, name string) *collogs.ExportLogsServiceRequest {
	t.Helper()
	req := &collogs.ExportLogsServiceRequest{}
	if err := decode(readFixture(t, name), encJSON, req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}

// total sums a report's deltas by model.
func total(rep Report) map[string]hub.UsageCounts {
	out := map[string]hub.UsageCounts{}
	for _, d := range rep.Deltas {
		c := out[d.Model]
		c.Add(d.Counts)
		out[d.Model] = c
	}
	return out
}

func TestHostShapes(t *testing.T) {
	t.Parallel()
	sonnet, haiku := "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
	tests := []struct {
		file        string
		logs        bool
		want        map[string]hub.UsageCounts
		rateLimited bool
		tool        bool
	}{
		{file: "claude_metrics.json", want: map[string]hub.UsageCounts{
			sonnet: {Input: 1200, Output: 340, CacheRead: 50000, CacheCreation: 2000, CostUSD: 0.0321}}},
		{file: "claude_logs.json", logs: true, rateLimited: true, tool: true, want: map[string]hub.UsageCounts{
			sonnet: {Input: 100, Output: 250, CacheRead: 30000, CacheCreation: 1200, Requests: 1, CostUSD: 0.0123},
			haiku:  {Input: 40, Output: 12, Requests: 1, CostUSD: 0.0011}}},
		{file: "codex_logs.json", logs: true, tool: true, want: map[string]hub.UsageCounts{
			"gpt-5-codex": {Input: 30642, CacheRead: 1920, Output: 35, Requests: 1}}},
		{file: "codex_metrics.json", want: map[string]hub.UsageCounts{
			"gpt-5-codex": {Input: 30642, CacheRead: 1920, Output: 35, Requests: 1}}},
		// gen_ai.client.token.usage repeats gemini_cli.token.usage: not counted.
		{file: "gemini_metrics.json", want: map[string]hub.UsageCounts{
			"gemini-2.5-pro": {Input: 33779 - 9513, CacheRead: 9513, Output: 390 + 2111, Requests: 3}}},
		{file: "gemini_logs.json", logs: true, rateLimited: true, tool: true, want: map[string]hub.UsageCounts{
			"gemini-2.5-pro": {Input: 33779 - 9513, CacheRead: 9513, Output: 390 + 2111, Requests: 1}}},
		{file: "genai_metrics.json", want: map[string]hub.UsageCounts{
			"gpt-4o-mini-2024-07-18": {Input: 500, Output: 80, Requests: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			m := NewMeter()
			var rep Report
			if tt.logs {
				rep = m.Logs(1, logsFixture(t, tt.file))
			} else {
				rep = m.Metrics(1, metricsFixture(t, tt.file))
			}
			got := total(rep)
			if len(got) != len(tt.want) {
				t.Fatalf("models = %v, want %v", got, tt.want)
			}
			for model, w := range tt.want {
				g := got[model]
				if g.Input != w.Input || g.Output != w.Output || g.CacheRead != w.CacheRead || g.CacheCreation != w.CacheCreation ||
					g.Requests != w.Requests || !near(g.CostUSD, w.CostUSD) {
					t.Errorf("%s: got %+v, want %+v", model, g, w)
				}
			}
			if got := !rep.RateLimited.IsZero(); got != tt.rateLimited {
				t.Errorf("rate limited = %v, want %v", got, tt.rateLimited)
			}
			if got := !rep.ToolActive.IsZero(); got != tt.tool {
				t.Errorf("tool active = %v, want %v", got, tt.tool)
			}
			for _, d := range rep.Deltas {
				if d.At.Before(time.Unix(1764619200, 0)) || d.At.After(time.Unix(1764619300, 0)) {
					t.Errorf("delta at %v, want the point's time", d.At)
				}
			}
		})
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// A resent export adds nothing, whatever its signal.
func TestResentExportCountsOnce(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"claude_metrics.json", "claude_logs.json", "codex_metrics.json", "gemini_metrics.json", "gemini_logs.json"} {
		m := NewMeter()
		var first, again Report
		if f == "claude_logs.json" || f == "gemini_logs.json" {
			first, again = m.Logs(1, logsFixture(t, f)), m.Logs(1, logsFixture(t, f))
		} else {
			first, again = m.Metrics(1, metricsFixture(t, f)), m.Metrics(1, metricsFixture(t, f))
		}
		if len(first.Deltas) == 0 || len(again.Deltas) != 0 {
			t.Errorf("%s: first export %d deltas, resent %d; want some, then none", f, len(first.Deltas), len(again.Deltas))
		}
		// Another agent's identical export is its own.
		if other := m.Metrics(2, metricsFixture(t, "claude_metrics.json")); len(other.Deltas) == 0 {
			t.Errorf("%s: another agent's export counted nothing", f)
		}
	}
}

// sumPoint is a one-point export of claude_code.token.usage (type input).
func sumPoint(session string, temporality int, start, at, value int64) *colmetrics.ExportMetricsServiceRequest {
	return mustMetrics(`{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},
	"scopeMetrics":[{"metrics":[{"name":"claude_code.token.usage","sum":{"aggregationTemporality":` + itoa(int64(temporality)) + `,"isMonotonic":true,"dataPoints":[
	{"attributes":[{"key":"session.id","value":{"stringValue":"` + session + `"}},{"key":"type","value":{"stringValue":"input"}},{"key":"model","value":{"stringValue":"m"}}],
	 "startTimeUnixNano":"` + itoa(start) + `","timeUnixNano":"` + itoa(at) + `","asInt":"` + itoa(value) + `"}]}}]}]}]}`)
}

func mustMetrics(s string) *colmetrics.ExportMetricsServiceRequest {
	req := &colmetrics.ExportMetricsServiceRequest{}
	if err := decode([]byte(s), encJSON, req); err != nil {
		panic(err)
	}
	return req
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func inputOf(rep Report) int64 {
	var n int64
	for _, d := range rep.Deltas {
		n += d.Counts.Input
	}
	return n
}

func TestTemporality(t *testing.T) {
	t.Parallel()
	const delta, cumulative = 1, 2
	steps := []struct {
		name        string
		temporality int
		start, at   int64
		value       int64
		want        int64
	}{
		{"cumulative first point counts whole", cumulative, 100, 200, 50, 50},
		{"cumulative adds the difference", cumulative, 100, 300, 80, 30},
		{"cumulative resent adds nothing", cumulative, 100, 300, 80, 0},
		{"cumulative older point adds nothing", cumulative, 100, 250, 60, 0},
		{"cumulative restarted counts whole", cumulative, 400, 500, 20, 20},
		{"cumulative value fell: restarted", cumulative, 400, 600, 5, 5},
	}
	m := NewMeter()
	for _, s := range steps {
		if got := inputOf(m.Metrics(1, sumPoint("s", s.temporality, s.start, s.at, s.value))); got != s.want {
			t.Errorf("%s: input %d, want %d", s.name, got, s.want)
		}
	}
	d := NewMeter()
	for i, s := range []struct{ at, value, want int64 }{{200, 7, 7}, {300, 5, 5}, {300, 5, 0}, {250, 9, 0}, {400, 1, 1}} {
		if got := inputOf(d.Metrics(1, sumPoint("s", delta, s.at-100, s.at, s.value))); got != s.want {
			t.Errorf("delta step %d: input %d, want %d", i, got, s.want)
		}
	}
}

// In a session that sends events, the events count and its metrics do
// not; a session with metrics only is counted by them.
func TestEventsWinOverMetrics(t *testing.T) {
	t.Parallel()
	m := NewMeter()
	logs := m.Logs(1, logsFixture(t, "claude_logs.json")) // session sess-events
	if inputOf(logs) != 140 {
		t.Fatalf("events input = %d, want 140", inputOf(logs))
	}
	if got := inputOf(m.Metrics(1, sumPoint("sess-events", 1, 1764619200000000000, 1764619260000000000, 140))); got != 0 {
		t.Errorf("metrics of a session with events counted %d, want 0", got)
	}
	if got := inputOf(m.Metrics(1, sumPoint("sess-metrics-only", 1, 1764619200000000000, 1764619260000000000, 70))); got != 70 {
		t.Errorf("metrics of a session without events counted %d, want 70", got)
	}
	// Codex's turn metrics name no conversation: with its events seen,
	// they are not counted.
	c := NewMeter()
	c.Logs(1, logsFixture(t, "codex_logs.json"))
	if got := c.Metrics(1, metricsFixture(t, "codex_metrics.json")); len(got.Deltas) != 0 {
		t.Errorf("codex metrics beside its events counted %+v, want nothing", total(got))
	}
}

func TestMeterBounded(t *testing.T) {
	t.Parallel()
	m := NewMeter()
	for i := range int64(3 * maxSeries) {
		m.Metrics(1, sumPoint("s"+itoa(i), 1, 1, 2, 1))
	}
	a := m.agents[1]
	if len(a.series) > maxSeries || len(a.sessions) > maxSessions {
		t.Errorf("remembered %d series and %d sessions, want at most %d and %d", len(a.series), len(a.sessions), maxSeries, maxSessions)
	}
}
