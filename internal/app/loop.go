package app

import (
	"context"

	"github.com/agenthub/hub/internal/webhook"
)

// startLoop runs what the people in the loop need beside the services:
// the webhooks' dispatcher, which hears of every new inbox item, and the
// inbox's fallback watcher, both until runCtx ends (tracked like every
// other goroutine of Main).
func (m *Main) startLoop(runCtx context.Context) {
	d := webhook.New(m.Services.Webhooks, webhook.Options{Logger: m.Logger})
	m.Services.Inbox.SetSink(d)
	m.metrics.CounterVecFunc("webhook_items_dropped_total", "Inbox items not sent to a webhook because its queue was full (the receiver too slow or down), per webhook ID; \"intake\": before any webhook.", "webhook", func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range d.Dropped() {
			out[k] = float64(v)
		}
		return out
	})
	m.goRun(func() error { return m.Services.Inbox.Run(runCtx) })
	m.goRun(func() error { return d.Run(runCtx) })
}
