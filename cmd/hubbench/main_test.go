package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestQuickRun runs hubbench --quick, smaller still, against a real hub
// binary built from this module. It checks that the run completes and
// reports numbers for every scenario; it asserts no timing.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real hub; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"--quick", "--nice", "0", "--waiters", "1,20", "--memory-waiters", "40", "--poll-waiters", "20",
		"--samples", "10", "--poll-samples", "2", "--idle", "500ms", "--strace-window", "500ms", "--settle", "200ms", "--duration", "300ms",
		"--backlog", "50", "--tick-agents", "300", "--tick-due", "0,100", "--tick-samples", "1", "--tick-interval", "2s"}
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("hubbench %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Wake latency.*\| notify \| 20 \| p50 \*\*[0-9.]+ [µm]?s\*\*`),
		regexp.MustCompile(`Wake latency.*\| notify \| 1 \| p50 \*\*[0-9.]+ [µm]?s\*\*`),
		regexp.MustCompile(`Wake latency.*\| poll \| 20 \| p50 \*\*[0-9.]+ [µm]?s\*\*`),
		regexp.MustCompile(`posts/s.*\*\*[0-9,]+/s\*\*`),
		regexp.MustCompile(`Heartbeats/s.*\*\*[0-9,]+/s\*\*`),
		regexp.MustCompile(`Heartbeats/s, 8 agents with 5[0-9] unread each.*\*\*[0-9,]+/s\*\*`),
		regexp.MustCompile(`Heartbeat cost with ÷ without the backlog.*\*\*[0-9.]+ [µm]?s → [0-9.]+ [µm]?s \(×[0-9.]+\)\*\*`),
		regexp.MustCompile(`Orchestrator tick, 300 agents.*100 due: median \*\*[0-9.]+ [µm]?s\*\*.*100 nudged per tick`),
		regexp.MustCompile(`RSS per parked waiter \| notify \| 40 \| \*\*-?[0-9.]+ KiB\*\*`),
		regexp.MustCompile(`Idle cost.*\| notify \| 0 \| hub CPU \*\*[0-9.]+ ms/s\*\*`),
		regexp.MustCompile(`Idle cost.*\| notify \| 40 \| hub CPU \*\*[0-9.]+ ms/s\*\*`),
		regexp.MustCompile(`Idle cost.*\| poll \| 20 \| hub CPU \*\*[0-9.]+ ms/s\*\*`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the report has no line matching %s\nreport:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
}

func TestParseFlagsRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--waiters", "1,x"},
		{"--waiters", "0"},
		{"--scenarios", "wake,nope"},
		{"--samples", "0"},
		{"--addr", "127.0.0.1:7700"}, // no token
		{"--strace", "maybe"},
		{"--hub-env", "NOEQUALS"},
		{"--tick-agents", "10", "--tick-due", "11"},
		{"--tick-agents", "10", "--tick-due", "4", "--tick-samples", "3"}, // 12 due, 10 agents
		{"--tick-interval", "10ms"},
		{"--backlog", "0"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("parseFlags(%q) = nil error, want one", args)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10}, {0, 1}} {
		if got := percentile(ds, tc.q); got != tc.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := percentile(nil, .5); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
}

func TestScrapeMetric(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "# HELP hub_store_queries_total x\n# TYPE hub_store_queries_total counter\n"+
			"hub_store_queries_total{kind=\"read\"} 40\nhub_store_queries_total{kind=\"write\"} 2\nhub_store_queries_total_other 99\n")
	}))
	defer srv.Close()
	if v, ok := scrapeMetric(context.Background(), srv.URL, "hub_store_queries_total"); !ok || v != 42 {
		t.Errorf("scrapeMetric = %v, %v; want 42, true", v, ok)
	}
	if _, ok := scrapeMetric(context.Background(), srv.URL, "absent_total"); ok {
		t.Error("scrapeMetric found a metric that is not there")
	}
}

func TestNum(t *testing.T) {
	if got := num(1234567); got != "1,234,567" {
		t.Errorf("num(1234567) = %q", got)
	}
	if got := num(-1000); got != "-1,000" {
		t.Errorf("num(-1000) = %q", got)
	}
}
