package app

import (
	"net/http"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/metrics"
)

// Prometheus metrics at /metrics (internal/metrics): posts, waits and wake
// latency from the domain (hub.Config.Metrics), RPCs by method and code from
// an interceptor, and gauges read at scrape time.
func init() {
	httpExtras = append(httpExtras, func(m *Main) (string, http.Handler, error) {
		return "GET /metrics", m.metrics.Handler(), nil
	})
}

// initMetrics creates the registry before the service, so that the domain
// reports to it. A Config.Metrics set by the caller still gets every call.
func (m *Main) initMetrics() {
	m.metrics = metrics.New()
	if m.Config.Metrics == nil {
		m.Config.Metrics = m.metrics
	} else {
		m.Config.Metrics = teeMetrics{m.Config.Metrics, m.metrics}
	}
	m.metrics.GaugeFunc("parked_waiters", "WaitForMessages calls parked now.", func() float64 {
		if m.Service == nil {
			return 0
		}
		return float64(m.Service.Waiters().Count())
	})
	m.metrics.GaugeFunc("beat", "The global beat counter.", func() float64 {
		if m.Service == nil {
			return 0
		}
		return float64(m.Service.Beat())
	})
	m.metrics.GaugeFunc("schema_version", "The store's newest applied migration.", func() float64 {
		if m.Store == nil {
			return 0
		}
		return float64(m.Store.SchemaVersion())
	})
	m.metrics.CounterFunc("orchestrator_ticks_total", "Orchestrator ticks run by this process.", func() float64 {
		if m.tickStats == nil {
			return 0
		}
		return float64(m.tickStats().Ticks)
	})
	m.metrics.GaugeFunc("orchestrator_last_tick_seconds", "Duration of the orchestrator's last tick.", func() float64 {
		if m.tickStats == nil {
			return 0
		}
		return float64(m.tickStats().LastMicro) / 1e6
	})
}

// teeMetrics reports to two hub.Metrics.
type teeMetrics [2]hub.Metrics

func (t teeMetrics) MessagePosted() { t[0].MessagePosted(); t[1].MessagePosted() }

func (t teeMetrics) WaitEnded(parked time.Duration, timedOut bool, wake time.Duration) {
	t[0].WaitEnded(parked, timedOut, wake)
	t[1].WaitEnded(parked, timedOut, wake)
}
