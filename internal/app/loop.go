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
	m.metrics.CounterFunc("webhook_items_dropped_total", "Inbox items not sent to the webhooks because their queue was full (a receiver too slow or down).", func() float64 {
		return float64(d.Dropped())
	})
	m.goRun(func() error { return m.Services.Inbox.Run(runCtx) })
	m.goRun(func() error { return d.Run(runCtx) })
}
