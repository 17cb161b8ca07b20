package usage

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	if err := decode(readFixture(t, name), encJSON, nil, req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}

func logsFixture(t *testing.T, name string) *collogs.ExportLogsServiceRequest {
	t.Helper()
	req := &collogs.ExportLogsServiceRequest{}
	if err := decode(readFixture(t, name), encJSON, nil, req); err != nil {
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

// TestHostShapes reads what the real hosts sent in the hosts rig
// (scripts/record-otlp.sh): each made two model requests of 10 input
// tokens, 4 read from the cache, 2 written to it (Anthropic's API alone
// reports those), 5 output tokens, 1 of reasoning (Gemini counts it
// beside its output, OpenAI inside). Hand-written: what no host sent there
// (rate limits; the GenAI convention alone).
func TestHostShapes(t *testing.T) {
	t.Parallel()
	claude := hub.UsageCounts{Input: 20, Output: 10, CacheRead: 8, CacheCreation: 4, Requests: 2, CostUSD: 0.0002274}
	claudeMetrics := claude
	claudeMetrics.Requests = 0 // Claude Code's metrics count no requests
	codex := hub.UsageCounts{Input: 20, Output: 10, CacheRead: 8, Requests: 2}
	codexMetrics := codex
	codexMetrics.Requests = 1 // Codex's metrics count turns
	gemini := hub.UsageCounts{Input: 20, Output: 12, CacheRead: 8, Requests: 2}
	tests := []struct {
		file        string
		logs        bool
		want        map[string]hub.UsageCounts
		rateLimited bool
		tool        bool
	}{
		{file: "claude_metrics.json", want: map[string]hub.UsageCounts{"claude-sonnet-4-5": claudeMetrics}},
		{file: "claude_logs.json", logs: true, tool: true, want: map[string]hub.UsageCounts{"claude-sonnet-4-5": claude}},
		{file: "codex_logs.json", logs: true, tool: true, want: map[string]hub.UsageCounts{"gpt-5": codex}},
		{file: "codex_metrics.json", want: map[string]hub.UsageCounts{"gpt-5": codexMetrics}},
		// gen_ai.client.token.usage repeats gemini_cli.token.usage: not
		// counted; the second export repeats the first (cumulative).
		{file: "gemini_metrics.json", want: map[string]hub.UsageCounts{"gemini-2.5-pro": gemini}},
		{file: "gemini_logs.json", logs: true, tool: true, want: map[string]hub.UsageCounts{"gemini-2.5-pro": gemini}},
		{file: "ratelimit_logs.json", logs: true, rateLimited: true, want: map[string]hub.UsageCounts{}},
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
				if d.At.IsZero() {
					t.Errorf("delta %+v has no time, want the point's", d)
				}
			}
		})
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// A resent export adds nothing, whatever its signal.
func TestResentExportCountsOnce(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"claude_metrics.json", "claude_logs.json", "codex_metrics.json", "codex_logs.json", "gemini_metrics.json", "gemini_logs.json"} {
		m := NewMeter()
		var first, again Report
		if strings.HasSuffix(f, "_logs.json") {
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
	if err := decode([]byte(s), encJSON, nil, req); err != nil {
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
// not, whichever export arrives first (the real hosts send their metrics
// first in a short session: Claude Code's every second, its events in
// batches), and its metrics' series cost no memory; a session with
// metrics only is counted by them.
func TestEventsWinOverMetrics(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"claude", "codex", "gemini"} {
		events := total(NewMeter().Logs(1, logsFixture(t, host+"_logs.json")))

		m := NewMeter()
		m.Logs(1, logsFixture(t, host+"_logs.json"))
		if got := m.Metrics(1, metricsFixture(t, host+"_metrics.json")); len(got.Deltas) != 0 {
			t.Errorf("%s: metrics after the session's events counted %+v, want nothing", host, total(got))
		}
		if n := len(m.agents[1].series); n != 0 {
			t.Errorf("%s: %d metric series remembered of a session its events count, want none", host, n)
		}

		m = NewMeter()
		first := m.Metrics(1, metricsFixture(t, host+"_metrics.json"))
		if len(first.Deltas) == 0 {
			t.Fatalf("%s: metrics before any event counted nothing", host)
		}
		then := m.Logs(1, logsFixture(t, host+"_logs.json"))
		sum := total(Report{Deltas: append(first.Deltas, then.Deltas...)})
		for model, w := range events {
			g := sum[model]
			if g.Input != w.Input || g.Output != w.Output || g.CacheRead != w.CacheRead || g.CacheCreation != w.CacheCreation ||
				g.Requests != w.Requests || !near(g.CostUSD, w.CostUSD) {
				t.Errorf("%s: metrics then events counted %+v of %s, want the events' %+v", host, g, model, w)
			}
		}
		if got := m.Metrics(1, metricsFixture(t, host+"_metrics.json")); len(got.Deltas) != 0 {
			t.Errorf("%s: metrics resent after the events counted %+v, want nothing", host, total(got))
		}
	}
	m := NewMeter()
	m.Logs(1, logsFixture(t, "claude_logs.json"))
	if got := inputOf(m.Metrics(1, sumPoint("sess-metrics-only", 1, 1764619200000000000, 1764619260000000000, 70))); got != 70 {
		t.Errorf("metrics of a session without events counted %d, want 70", got)
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
