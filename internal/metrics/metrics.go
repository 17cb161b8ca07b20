// Package metrics exposes the hub's measurements in the Prometheus text
// format (github.com/prometheus/client_golang): it implements hub.Metrics
// for the domain's counters, adds gauges read at scrape time (parked
// waiters, orchestrator figures), RPC counts and durations through a gRPC
// interceptor, the build (hub_build_info), and the Go runtime and process
// collectors.
package metrics

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/version"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Namespace prefixes every metric of the hub.
const Namespace = "hub"

// Metrics is one hub's registry. The zero value is not usable; call New.
type Metrics struct {
	reg *prometheus.Registry

	posts       *prometheus.CounterVec
	waits       *prometheus.CounterVec
	wakeLatency prometheus.Histogram
	parked      prometheus.Histogram
	rpcs        *prometheus.CounterVec
	carried     *prometheus.CounterVec
	rpcDuration *prometheus.HistogramVec
	tokens      *prometheus.CounterVec
	requests    *prometheus.CounterVec
	cost        *prometheus.CounterVec
	tick        prometheus.Histogram
	tickSteps   *prometheus.HistogramVec
	methods     sync.Map  // gRPC method name → *methodMetrics
	carriedOKs  sync.Map  // gRPC method name → its stream_calls_total with code OK
	clock       hub.Clock // times the RPCs

	owedMu sync.Mutex
	owed   map[owedKey]float64 // usage taken back, by agent and counter: paid from the next gains
}

// owedKey names one usage counter of one agent ("tokens/input",
// "requests", "cost").
type owedKey struct{ agent, counter string }

var _ hub.Metrics = (*Metrics)(nil)

// New returns a registry with the hub's metrics, hub_build_info, and the
// Go runtime and process collectors; RPC durations are read from clock.
func New(clock hub.Clock) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), clock: clock, owed: map[owedKey]float64{}}
	// By project: projects are made by the admin, so they are few.
	m.posts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "messages_posted_total",
		Help: "Messages posted (by agents, the admin and the orchestrator), by project.",
	}, []string{"project"})
	m.waits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "waits_total",
		Help: "WaitForMessages calls that returned, by outcome: messages or timed_out.",
	}, []string{"outcome"})
	m.wakeLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "wake_latency_seconds",
		Help: "Time from a parked wait's wake-up by a post to its return.",
		// 50 µs … ~1.6 s.
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
	})
	m.parked = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "wait_parked_seconds",
		Help:    "How long WaitForMessages calls stayed parked.",
		Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 45, 60},
	})
	m.rpcs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "rpcs_total",
		Help: "Unary RPCs handled, by service, method and status code.",
	}, []string{"service", "method", "code"})
	m.carried = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "stream_calls_total",
		Help: "Of rpcs_total, the calls a Subscribe stream carried (SubscribeRequest.call) rather than calls of their own, by service, method and status code.",
	}, []string{"service", "method", "code"})
	m.rpcDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "rpc_duration_seconds",
		Help:    "Duration of unary RPCs other than WaitForMessages (see wait_parked_seconds), by service and method.",
		Buckets: prometheus.ExponentialBuckets(100e-6, 4, 10), // 100 µs … ~26 s
	}, []string{"service", "method"})
	// By agent: what each agent's host reported it spent (usage.go).
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "usage_tokens_total",
		Help: "Model tokens agents' hosts reported, by agent and type: input, output, cache_read, cache_creation.",
	}, []string{"agent", "type"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "usage_requests_total",
		Help: "Model requests agents' hosts reported, by agent.",
	}, []string{"agent"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "usage_cost_usd_total",
		Help: "Cost in US dollars agents' hosts reported, by agent.",
	}, []string{"agent"})
	// 1 ms … ~4 s: a tick's budget is its interval (5 s by default).
	tickBuckets := prometheus.ExponentialBuckets(1e-3, 2, 13)
	m.tick = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "orchestrator_tick_seconds",
		Help:    "Duration of the orchestrator's ticks run by this process.",
		Buckets: tickBuckets,
	})
	m.tickSteps = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "orchestrator_step_seconds",
		Help:    "Duration of each step of the orchestrator's ticks (beat, mentions, health+nudges, pulses, cron, …), by step.",
		Buckets: tickBuckets,
	}, []string{"step"})
	m.reg.MustRegister(m.posts, m.waits, m.wakeLatency, m.parked, m.rpcs, m.carried, m.rpcDuration, m.tokens, m.requests, m.cost, m.tick, m.tickSteps,
		buildInfo(version.Version(), version.Commit(), runtime.Version()),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// buildInfo is hub_build_info: always 1, its labels name the build, as
// Prometheus's own *_build_info does, so that a query can join on them. An
// unknown commit is "unknown".
func buildInfo(version, commit, goVersion string) prometheus.Collector {
	if commit == "" {
		commit = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help:        "The hub's build: version, commit and Go version as labels; the value is 1.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit, "goversion": goVersion},
	})
	g.Set(1)
	return g
}

// TickRan records one orchestrator tick: its duration and its steps'.
func (m *Metrics) TickRan(tick time.Duration, steps map[string]time.Duration) {
	m.tick.Observe(tick.Seconds())
	for name, d := range steps {
		m.tickSteps.WithLabelValues(name).Observe(d.Seconds())
	}
}

// MessagePosted implements hub.Metrics.
func (m *Metrics) MessagePosted(project string) { m.posts.WithLabelValues(project).Inc() }

// WaitEnded implements hub.Metrics.
func (m *Metrics) WaitEnded(parked time.Duration, timedOut bool, wakeLatency time.Duration) {
	outcome := "messages"
	if timedOut {
		outcome = "timed_out"
	}
	m.waits.WithLabelValues(outcome).Inc()
	m.parked.Observe(parked.Seconds())
	if wakeLatency > 0 {
		m.wakeLatency.Observe(wakeLatency.Seconds())
	}
}

// UsageRecorded implements hub.Metrics. Usage taken back (a count
// below 0: what a session's metrics counted before its events came) is
// owed, and the agent's next gains pay it before a counter moves: a
// counter never falls, and never counts what was taken back.
func (m *Metrics) UsageRecorded(agent string, c hub.UsageCounts) {
	for _, t := range []struct {
		name string
		n    int64
	}{{"input", c.Input}, {"output", c.Output}, {"cache_read", c.CacheRead}, {"cache_creation", c.CacheCreation}} {
		if n := m.gain(owedKey{agent, "tokens/" + t.name}, float64(t.n)); n > 0 {
			m.tokens.WithLabelValues(agent, t.name).Add(n)
		}
	}
	if n := m.gain(owedKey{agent, "requests"}, float64(c.Requests)); n > 0 {
		m.requests.WithLabelValues(agent).Add(n)
	}
	if n := m.gain(owedKey{agent, "cost"}, c.CostUSD); n > 0 {
		m.cost.WithLabelValues(agent).Add(n)
	}
}

// gain returns what of n the counter k adds: n less what k owes (a
// negative n is owed, and adds nothing).
func (m *Metrics) gain(k owedKey, n float64) float64 {
	if n == 0 {
		return 0
	}
	m.owedMu.Lock()
	defer m.owedMu.Unlock()
	owed := m.owed[k]
	if n < 0 {
		m.owed[k] = owed - n
		return 0
	}
	paid := min(owed, n)
	if owed -= paid; owed > 0 {
		m.owed[k] = owed
	} else {
		delete(m.owed, k)
	}
	return n - paid
}

// GaugeFunc registers a gauge read from f at each scrape (hub_NAME).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, f))
}

// GaugeVecFunc registers a gauge with one label, read from f at each
// scrape: one series per key of the map f returns (hub_NAME{label=key}).
func (m *Metrics) GaugeVecFunc(name, help, label string, f func() map[string]float64) {
	m.reg.MustRegister(&gaugeVecFunc{desc: prometheus.NewDesc(Namespace+"_"+name, help, []string{label}, nil), f: f})
}

// CounterVecFunc registers a counter with one label, read from f at each
// scrape: one series per key of the map f returns (hub_NAME{label=key});
// no value may decrease.
func (m *Metrics) CounterVecFunc(name, help, label string, f func() map[string]float64) {
	m.reg.MustRegister(&gaugeVecFunc{desc: prometheus.NewDesc(Namespace+"_"+name, help, []string{label}, nil), f: f, typ: prometheus.CounterValue})
}

// gaugeVecFunc is the collector behind GaugeVecFunc and CounterVecFunc.
type gaugeVecFunc struct {
	desc *prometheus.Desc
	f    func() map[string]float64
	typ  prometheus.ValueType // 0: a gauge
}

func (g *gaugeVecFunc) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gaugeVecFunc) Collect(ch chan<- prometheus.Metric) {
	typ := g.typ
	if typ == 0 {
		typ = prometheus.GaugeValue
	}
	for k, v := range g.f() {
		ch <- prometheus.MustNewConstMetric(g.desc, typ, v, k)
	}
}

// CounterFunc registers a counter read from f at each scrape (hub_NAME);
// f must never decrease.
func (m *Metrics) CounterFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, f))
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the underlying registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// UnaryInterceptor counts every unary RPC by method and status code, and
// times those that are not long-polls.
func (m *Metrics) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := m.clock.Now()
	resp, err := handler(ctx, req)
	mm := m.method(info.FullMethod)
	if code := status.Code(err); code == codes.OK {
		mm.ok.Inc()
	} else {
		m.rpcs.WithLabelValues(mm.service, mm.name, code.String()).Inc()
	}
	if mm.duration != nil {
		mm.duration.Observe(m.clock.Now().Sub(start).Seconds())
	}
	return resp, err
}

// CarriedInterceptor counts the calls a stream carries (hub_stream_calls_total),
// by method and status code: put it before UnaryInterceptor in the chain
// they run through (server.CarryThrough), which counts them in rpcs_total.
func (m *Metrics) CarriedInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if code := status.Code(err); code == codes.OK {
		m.carriedOK(info.FullMethod).Inc()
	} else {
		service, name := splitMethod(info.FullMethod)
		m.carried.WithLabelValues(service, name, code.String()).Inc()
	}
	return resp, err
}

// carriedOK returns the series of the calls of the method named full a
// stream carried that succeeded, looked up once.
func (m *Metrics) carriedOK(full string) prometheus.Counter {
	if v, ok := m.carriedOKs.Load(full); ok {
		return v.(prometheus.Counter)
	}
	service, name := splitMethod(full)
	v, _ := m.carriedOKs.LoadOrStore(full, m.carried.WithLabelValues(service, name, codes.OK.String()))
	return v.(prometheus.Counter)
}

// methodMetrics are one method's series, looked up once (a label lookup
// hashes every label value, on every call).
type methodMetrics struct {
	service, name string
	ok            prometheus.Counter  // rpcs_total with code OK
	duration      prometheus.Observer // nil for WaitForMessages
}

// method returns the series of the gRPC method named full (a registered
// method: gRPC refuses the others before any interceptor runs, so there
// are as many entries as methods).
func (m *Metrics) method(full string) *methodMetrics {
	if v, ok := m.methods.Load(full); ok {
		return v.(*methodMetrics)
	}
	service, name := splitMethod(full)
	mm := &methodMetrics{service: service, name: name, ok: m.rpcs.WithLabelValues(service, name, codes.OK.String())}
	if name != "WaitForMessages" {
		mm.duration = m.rpcDuration.WithLabelValues(service, name)
	}
	v, _ := m.methods.LoadOrStore(full, mm)
	return v.(*methodMetrics)
}

// splitMethod turns "/hub.v1.AgentService/PostMessage" into
// ("AgentService", "PostMessage").
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	service, method, _ = strings.Cut(full, "/")
	if i := strings.LastIndexByte(service, '.'); i >= 0 {
		service = service[i+1:]
	}
	return service, method
}
