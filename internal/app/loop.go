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
	if m.DatabaseURL == "" {
		// One hub per data dir: no hook waits on an approval this hub did
		// not open, so every approval left open is left to the terminal.
		if n, err := m.Services.Inbox.ExpireDeadApprovals(runCtx, m.Clock.Now()); err != nil {
			m.Logger.Warn("expire the approvals a stopped hub left open", "err", err)
		} else if n > 0 {
			m.Logger.Info("expired the approvals a stopped hub left open: their hooks are gone", "approvals", n)
		}
	}
	d := webhook.New(m.Services.Webhooks, webhook.Options{Logger: m.Logger, Clock: m.Clock})
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
