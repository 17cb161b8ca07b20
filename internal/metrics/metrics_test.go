package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/version"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	clock := hub.NewFakeClock(time.Unix(1_700_000_000, 0))
	m := New(clock)
	m.MessagePosted("default")
	m.MessagePosted("default")
	m.MessagePosted("red")
	m.GaugeVecFunc("agents", "agents", "project", func() map[string]float64 { return map[string]float64{"default": 3, "red": 1} })
	m.WaitEnded(2*time.Second, true, 0)
	m.WaitEnded(10*time.Millisecond, false, 300*time.Microsecond)
	n := 7.0
	m.GaugeFunc("parked_waiters", "parked", func() float64 { return n })
	m.CounterFunc("orchestrator_ticks_total", "ticks", func() float64 { return 3 })
	m.TickRan(300*time.Millisecond, map[string]time.Duration{"beat": 200 * time.Millisecond, "mentions": 100 * time.Millisecond})

	ok := func(context.Context, any) (any, error) { clock.Advance(time.Second); return "ok", nil }
	bad := func(context.Context, any) (any, error) {
		clock.Advance(time.Second / 2)
		return nil, status.Error(codes.InvalidArgument, "no")
	}
	m.UnaryInterceptor(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/hub.v1.AgentService/PostMessage"}, ok)
	m.UnaryInterceptor(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/hub.v1.AgentService/PostMessage"}, bad)
	m.UnaryInterceptor(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/hub.v1.AgentService/WaitForMessages"}, ok)
	if _, err := m.UnaryInterceptor(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x/Y"}, func(context.Context, any) (any, error) { return nil, errors.New("plain") }); err == nil {
		t.Fatal("the interceptor swallowed the handler's error")
	}

	out := scrape(t, m)
	for _, want := range []string{
		`hub_messages_posted_total{project="default"} 2`,
		`hub_messages_posted_total{project="red"} 1`,
		`hub_agents{project="default"} 3`,
		`hub_agents{project="red"} 1`,
		`hub_waits_total{outcome="timed_out"} 1`,
		`hub_waits_total{outcome="messages"} 1`,
		"hub_wake_latency_seconds_count 1",
		"hub_wait_parked_seconds_count 2",
		"hub_parked_waiters 7",
		"hub_orchestrator_ticks_total 3",
		"hub_orchestrator_tick_seconds_count 1",
		`hub_orchestrator_tick_seconds_bucket{le="0.512"} 1`,
		`hub_orchestrator_step_seconds_sum{step="beat"} 0.2`,
		`hub_orchestrator_step_seconds_count{step="mentions"} 1`,
		`hub_rpcs_total{code="OK",method="PostMessage",service="AgentService"} 1`,
		`hub_rpcs_total{code="InvalidArgument",method="PostMessage",service="AgentService"} 1`,
		`hub_rpcs_total{code="OK",method="WaitForMessages",service="AgentService"} 1`,
		`hub_rpc_duration_seconds_count{method="PostMessage",service="AgentService"} 2`,
		`hub_rpc_duration_seconds_sum{method="PostMessage",service="AgentService"} 1.5`, // timed by the clock
		"go_goroutines",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(out, `hub_rpc_duration_seconds_count{method="WaitForMessages"`) {
		t.Error("long-polls are timed in rpc_duration_seconds; they belong in wait_parked_seconds")
	}
	n = 0
	if out := scrape(t, m); !strings.Contains(out, "hub_parked_waiters 0") {
		t.Error("the gauge is not read at scrape time")
	}
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	out := scrape(t, New(hub.SystemClock{}))
	commit := version.Commit()
	if commit == "" {
		commit = "unknown"
	}
	want := fmt.Sprintf(`hub_build_info{commit=%q,goversion=%q,version=%q} 1`, commit, runtime.Version(), version.Version())
	if !strings.Contains(out, want+"\n") {
		t.Errorf("metrics lack %s", want)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(buildInfo("v1.2.3", "0123abcd", "go1.26.8"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "hub_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one series of hub_build_info", mfs)
	}
	s := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range s.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] != "v1.2.3" || labels["commit"] != "0123abcd" || labels["goversion"] != "go1.26.8" || len(labels) != 3 {
		t.Errorf("labels %v, want version v1.2.3, commit 0123abcd, goversion go1.26.8", labels)
	}
	if v := s.GetGauge().GetValue(); v != 1 {
		t.Errorf("hub_build_info = %v, want 1", v)
	}
}

func TestSplitMethod(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"/hub.v1.AgentService/PostMessage": {"AgentService", "PostMessage"},
		"/grpc.health.v1.Health/Check":     {"Health", "Check"},
		"odd":                              {"odd", ""},
	} {
		s, m := splitMethod(in)
		if s != want[0] || m != want[1] {
			t.Errorf("splitMethod(%q) = %q, %q; want %q, %q", in, s, m, want[0], want[1])
		}
	}
}

// TestUsageTakenBackIsNotCounted: a session's metrics count first, its
// events then take that back and count again; the counters end at what
// the events said, not at both.
func TestUsageTakenBackIsNotCounted(t *testing.T) {
	t.Parallel()
	m := New(hub.SystemClock{})
	m.UsageRecorded("ann", hub.UsageCounts{Input: 10, Requests: 1, CostUSD: 0.5})                // the metrics
	m.UsageRecorded("ann", hub.UsageCounts{Input: 6 - 10, Requests: 1 - 1, CostUSD: 0.25 - 0.5}) // the first event, the metrics taken back
	m.UsageRecorded("ann", hub.UsageCounts{Input: 5, Output: 3, Requests: 1, CostUSD: 0.25})     // the next event
	m.UsageRecorded("bob", hub.UsageCounts{Input: 7})
	out := scrape(t, m)
	for _, want := range []string{
		`hub_usage_tokens_total{agent="ann",type="input"} 11`,
		`hub_usage_tokens_total{agent="ann",type="output"} 3`,
		`hub_usage_requests_total{agent="ann"} 2`,
		`hub_usage_cost_usd_total{agent="ann"} 0.5`,
		`hub_usage_tokens_total{agent="bob",type="input"} 7`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
