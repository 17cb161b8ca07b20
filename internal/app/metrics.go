package app

import (
	"context"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/admission"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/metrics"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// initMetrics creates the Prometheus registry (internal/metrics, served at
// /metrics) before the service, so that the domain reports to it: posts,
// waits and wake latency from the domain (hub.Config.Metrics), RPCs by
// method and code from an interceptor, and gauges read at scrape time. A Config.Metrics set by the caller still gets every call.
func (m *Main) initMetrics() {
	m.metrics = metrics.New(m.Clock)
	if m.Config.Metrics == nil {
		m.Config.Metrics = m.metrics
	} else {
		m.Config.Metrics = teeMetrics{m.Config.Metrics, m.metrics}
	}
	m.metrics.GaugeFunc("parked_waiters", "WaitForMessages calls parked now.", func() float64 {
		if m.Services == nil {
			return 0
		}
		return float64(m.Services.Core.ParkedWaits())
	})
	m.metrics.GaugeFunc("dashboard_streams", "Dashboard pages following the live change stream now.", func() float64 {
		if m.Services == nil {
			return 0
		}
		return float64(m.Services.Core.Feed().Count())
	})
	m.metrics.GaugeFunc("beat", "The global beat counter.", func() float64 {
		if m.Services == nil {
			return 0
		}
		return float64(m.Services.Core.Beat())
	})
	m.metrics.GaugeFunc("schema_version", "The store's newest applied migration.", func() float64 {
		if m.Store == nil {
			return 0
		}
		return float64(m.Store.SchemaVersion())
	})
	m.metrics.GaugeFunc("store_queued_writes", "Writes waiting for the store's writer (the backlog behind the current commit).", func() float64 {
		if m.Store == nil {
			return 0
		}
		return float64(m.Store.QueuedWrites())
	})
	m.metrics.CounterFunc("store_write_batches_total", "Batches of writes the store's writer committed together (group commit); store_writes_total ÷ this is the writes per commit.", func() float64 {
		if m.Store == nil {
			return 0
		}
		batches, _ := m.Store.WriteBatches()
		return float64(batches)
	})
	m.metrics.CounterFunc("store_writes_total", "Writes the store's writer has run, in batches (store_write_batches_total).", func() float64 {
		if m.Store == nil {
			return 0
		}
		_, writes := m.Store.WriteBatches()
		return float64(writes)
	})
	m.metrics.GaugeFunc("orchestrator_leader", "1 if this process ran the last orchestrator tick (it holds the leader lock), else 0.", func() float64 {
		if m.leading == nil || !m.leading() {
			return 0
		}
		return 1
	})
	m.metrics.CounterFunc("store_checkpoints_total", "Checkpoints of the SQLite store's write-ahead log, run beside the writer or, past the log's cap, by it.", func() float64 {
		if c, ok := m.Store.(checkpointer); ok {
			return float64(c.Checkpoints().Runs)
		}
		return 0
	})
	m.metrics.CounterFunc("store_checkpoint_seconds_total", "Time spent in checkpoints of the SQLite store's write-ahead log.", func() float64 {
		if c, ok := m.Store.(checkpointer); ok {
			return c.Checkpoints().Time.Seconds()
		}
		return 0
	})
	m.metrics.CounterFunc("orchestrator_ticks_total", "Orchestrator ticks run by this process.", func() float64 {
		if m.tickStats == nil {
			return 0
		}
		return float64(m.tickStats().Ticks)
	})
	m.metrics.CounterFunc("auth_cache_misses_total", "Agent tokens checked by reading the store rather than the authentication cache (a token's first call, and each call after a change to any agent, past the cache's TTL, or while a shared store's listener is disconnected).", func() float64 {
		if m.Services == nil {
			return 0
		}
		return float64(m.Services.Agents.AuthCacheMisses())
	})
	m.metrics.CounterFunc("nudges_total", "Nudges sent (by the orchestrator and by admins), counted in the event log.", m.eventCounter(hub.EventNudge))
	m.metrics.CounterFunc("pulses_total", "Heartbeat pulses delivered, counted in the event log.", m.eventCounter(hub.EventPulse))
	m.metrics.GaugeVecFunc("agents", "Agents by project, disabled ones included (projects are made by the admin, so they are few).", "project", m.agentsByProject())
	m.metrics.GaugeFunc("orchestrator_last_tick_seconds", "Duration of the orchestrator's last tick.", func() float64 {
		if m.tickStats == nil {
			return 0
		}
		return float64(m.tickStats().LastMicro) / 1e6
	})
}

// eventCounter returns a scrape-time reader of the number of events of
// kind in the store (an index-only count); on an error it repeats the last
// value rather than dropping to zero.
func (m *Main) eventCounter(kind hub.EventKind) func() float64 {
	var mu sync.Mutex
	var last float64
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if m.Store == nil {
			return last
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if n, err := m.Store.CountEvents(ctx, string(kind)); err == nil {
			last = float64(n)
		}
		return last
	}
}

// teeMetrics reports to two hub.Metrics.
type teeMetrics [2]hub.Metrics

func (t teeMetrics) MessagePosted(project string) {
	t[0].MessagePosted(project)
	t[1].MessagePosted(project)
}

func (t teeMetrics) WaitEnded(parked time.Duration, timedOut bool, wake time.Duration) {
	t[0].WaitEnded(parked, timedOut, wake)
	t[1].WaitEnded(parked, timedOut, wake)
}

func (t teeMetrics) UsageRecorded(agent string, c hub.UsageCounts) {
	t[0].UsageRecorded(agent, c)
	t[1].UsageRecorded(agent, c)
}

// agentsByProject returns a scrape-time reader of the number of agents in
// each project; on an error it repeats the last answer.
func (m *Main) agentsByProject() func() map[string]float64 {
	var mu sync.Mutex
	last := map[string]float64{}
	return func() map[string]float64 {
		mu.Lock()
		defer mu.Unlock()
		if m.Services == nil {
			return last
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ps, err := m.Services.Projects.ListProjects(ctx)
		if err != nil {
			return last
		}
		last = make(map[string]float64, len(ps))
		for _, p := range ps {
			last[p.Name] = float64(p.Agents)
		}
		return last
	}
}

// metricsHandler serves /metrics; with a MetricsToken (--metrics-token) it
// answers only requests carrying it as their bearer token.
func (m *Main) metricsHandler() http.Handler {
	h := m.metrics.Handler()
	if m.MetricsToken == "" {
		return h
	}
	want := []byte(m.MetricsToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := admission.BearerToken(r.Header)
		if subtle.ConstantTimeCompare([]byte(token), want) != 1 {
			admission.WriteHTTP(w, status.Error(codes.Unauthenticated,
				`/metrics needs the metrics token: send "Authorization: Bearer <token>" with the hub's --metrics-token`), token != "")
			return
		}
		h.ServeHTTP(w, r)
	})
}
