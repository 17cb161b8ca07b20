package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFleetRun runs a small fleet against a real hub binary built from this
// module, with one dashboard, and checks that every figure of the JSON is
// there and that no call failed; it asserts no timing.
func TestFleetRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real hub; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "fleet.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--agents", "60", "--dashboards", "1", "--duration", "20s", "--warmup", "5s", "--report-every", "5s",
		"--nice", "0", "--heartbeat", "3s", "--activity", "4s", "--checkpoint", "6s", "--hook", "2s", "--post", "2s",
		"--mcp-http", "0.1", "--mcp-stdio", "2", "--stream", "0.3", "--channel-size", "10", "--probe-every", "500ms", "--json", out,
		"--offline", "0.3", "--offline-for", "2s"} // spells of a few seconds: many end within the run
	if err := runFleet(ctx, "fleet", args, &stdout, &stderr); err != nil {
		t.Fatalf("hubbench fleet %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"agents", "dashboards", "hub_cpu_cores", "hub_rss_bytes", "goroutines", "post_wake_p50_ms",
		"post_wake_p99_ms", "heartbeat_p99_ms", "tick_p99_ms", "dashboard_latency_p99_ms", "errors"} {
		if _, ok := r[k]; !ok {
			t.Errorf("the JSON has no %q: %s", k, b)
		}
	}
	for _, k := range []string{"hub_cpu_cores", "hub_rss_bytes", "goroutines", "post_wake_samples", "dashboard_latency_samples", "ticks", "calls_per_second"} {
		if v, _ := r[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want a measured figure\nstderr:\n%s", k, r[k], stderr.String())
		}
	}
	if byT, _ := r["post_wake_p50_p99_ms_by_transport"].(map[string]any); byT["gRPC stream"] == nil {
		t.Errorf("no wake-up measured on the agents holding a stream: %v", r["post_wake_p50_p99_ms_by_transport"])
	}
	if r["agents"].(float64) != 60 || r["dashboards"].(float64) != 1 {
		t.Errorf("agents %v dashboards %v, want 60 and 1", r["agents"], r["dashboards"])
	}
	if r["errors"].(float64) != 0 {
		t.Errorf("%v calls failed: %v\nstderr:\n%s", r["errors"], r["error_kinds"], stderr.String())
	}
	if !strings.Contains(stdout.String(), "| dashboard data latency") {
		t.Errorf("no report table on stdout:\n%s", stdout.String())
	}
}

func TestParseFleetFlagsRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--agents", "1"},
		{"--agents", "200000"},
		{"--dashboards", "65"},
		{"--warmup", "5m", "--duration", "5m"},
		{"--jitter", "1"},
		{"--direct", "0.8", "--channel", "0.3"},
		{"--channel-size", "1"},
		{"--offline", "1"},
		{"--agents", "10", "--mcp-http", "0.5", "--mcp-stdio", "6"},
		{"--stream", "1.5"},
		{"--agents", "10", "--mcp-http", "0.5", "--stream", "0.6"},
		{"--heartbeat", "0s"},
		{"--hub-env", "NOEQUALS"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		if _, err := parseFleetFlags("fleet", args, &stderr); err == nil {
			t.Errorf("parseFleetFlags(%q) = nil error, want one", args)
		}
	}
	c, err := parseFleetFlags("soak", nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.agents != 1000 || c.duration != 2*time.Hour || !c.soak {
		t.Errorf("soak defaults: %d agents, %s, leak check %v; want 1,000, 2h, on", c.agents, c.duration, c.soak)
	}
}

// The histogram's quantiles are within its 2 % buckets of the exact ones.
func TestLatHist(t *testing.T) {
	var h latHist
	var ds []time.Duration
	for i := 1; i <= 10000; i++ {
		d := time.Duration(i) * 37 * time.Microsecond
		h.add(d)
		ds = append(ds, d)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 1} {
		got, want := h.quantile(q), percentile(ds, q)
		if math.Abs(float64(got-want)) > 0.021*float64(want) {
			t.Errorf("quantile(%v) = %v, want %v within 2 %%", q, got, want)
		}
	}
	var other latHist
	other.add(time.Hour)
	h.merge(&other)
	if h.n != 10001 || h.quantile(1) != time.Hour {
		t.Errorf("after a merge: n %d, max %v", h.n, h.quantile(1))
	}
	if (&latHist{}).quantile(0.5) != 0 {
		t.Error("an empty histogram's quantile is not 0")
	}
}

// A wake is timed from its post's acknowledgement; a reply that came
// before it counts 0; a message posted before the wait began was waiting,
// not a wake.
func TestWakeMatcher(t *testing.T) {
	m := newWakeMatcher()
	t0 := time.Now()
	m.posted("1", t0, t0.Add(2*time.Millisecond))
	m.woke([]string{"1"}, t0, t0.Add(5*time.Millisecond), transportGRPC)
	m.woke([]string{"2"}, t0, t0.Add(time.Millisecond), transportHTTP) // before its post's reply
	m.posted("2", t0, t0.Add(3*time.Millisecond))
	m.posted("3", t0, t0.Add(time.Millisecond))
	m.woke([]string{"3"}, t0.Add(2*time.Millisecond), t0.Add(9*time.Millisecond), transportGRPC) // the wait began after it
	g, h := m.lat[transportGRPC].rotate(), m.lat[transportHTTP].rotate()
	if g.n != 1 || g.quantile(1) < 2900*time.Microsecond || g.quantile(1) > 3100*time.Microsecond {
		t.Errorf("gRPC: %d samples, max %v; want one of 3 ms", g.n, g.quantile(1))
	}
	if h.n != 1 || h.quantile(1) != 0 || m.before.Load() != 1 {
		t.Errorf("early reply: %d samples, max %v, %d before the acknowledgement; want one 0", h.n, h.quantile(1), m.before.Load())
	}
	m.sweep(t0.Add(time.Hour))
	if len(m.acked) != 0 || len(m.early) != 0 {
		t.Errorf("sweep left %d posts, %d early replies", len(m.acked), len(m.early))
	}
}

func TestProbeCount(t *testing.T) {
	rows := []byte(`{"agents":[{"agent":{"name":"a"},"unread_count":"7"},{"agent":{"name":"probe-x","role":""},"health":{"agent":"probe-x"},"unread_count":"42","mention_count":"0"}]}`)
	if n, ok := probeCount(rows, "probe-x"); !ok || n != 42 {
		t.Errorf("probeCount = %d, %v; want 42", n, ok)
	}
	if _, ok := probeCount(rows, "nobody"); ok {
		t.Error("found a row that is not there")
	}
	if n, ok := probeCount([]byte(`{"agents":[{"agent":{"name":"probe-x"}},{"agent":{"name":"b"},"unread_count":"7"}]}`), "probe-x"); !ok || n != 0 {
		t.Errorf("probeCount of a row without a count = %d, %v; want 0 (not the next row's 7)", n, ok)
	}
	for _, c := range []struct {
		data string
		n    int64
		ok   bool
	}{
		{`{"rows":[{"agent":{"name":"probe-x"},"unread_count":"3"}],"changes":[]}`, 3, true},
		{`{"rows":[{"agent":{"name":"probe-x"}}],"changes":[]}`, 0, true},
		{`{"rows":[],"changes":[{"row":{"agent":{"name":"a"},"unread_count":"9"}},{"row":{"agent":{"name":"probe-x"},"unread_count":"5"}}]}`, 5, true},
		{`{"rows":[],"changes":[{"row":{"agent":{"name":"probe-x"}},"cleared":["unread_count"]},{"row":{"agent":{"name":"a"},"unread_count":"9"}}]}`, 0, true},
		{`{"rows":[],"changes":[{"row":{"agent":{"name":"probe-x"},"health":{"state":"warning"}}},{"row":{"agent":{"name":"a"},"unread_count":"9"}}]}`, 0, false},
	} {
		var ev agentsEvent
		if err := json.Unmarshal([]byte(c.data), &ev); err != nil {
			t.Fatal(err)
		}
		if n, ok := ev.probeIn("probe-x"); n != c.n || ok != c.ok {
			t.Errorf("probeIn(%s) = %d, %v; want %d, %v", c.data, n, ok, c.n, c.ok)
		}
	}
	p := &probeMatcher{acked: map[int64]time.Time{}}
	t0 := time.Now()
	p.posted(1, t0)
	p.posted(2, t0.Add(time.Second))
	if got := p.seen(-1, 1, t0.Add(5*time.Second)); got != 1 || p.lat.cur.n != 0 {
		t.Errorf("a first sight: remembered %d with %d samples; want 1 and none (a baseline)", got, p.lat.cur.n)
	}
	if got := p.seen(1, 2, t0.Add(1500*time.Millisecond)); got != 2 || p.lat.cur.n != 1 || p.lat.cur.quantile(1) > 510*time.Millisecond {
		t.Errorf("probe 2 seen 0.5 s after its post: remembered %d, %d samples, max %v", got, p.lat.cur.n, p.lat.cur.quantile(1))
	}
}
