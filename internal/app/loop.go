package app

import (
	"context"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/server"
	"github.com/agenthub/hub/internal/webhook"
)

// Loop is the people in the loop: the inbox, people with tokens, webhooks
// and their dispatcher. Set by Start.
type Loop struct {
	Inbox      *hub.Inbox
	People     *hub.People
	Webhooks   *hub.Webhooks
	Dispatcher *webhook.Dispatcher
}

// startLoop builds the inbox and its neighbours over the service's store
// and runs the inbox's fallback watcher and the webhooks' dispatcher
// until runCtx ends (tracked like every other goroutine of Main).
func (m *Main) startLoop(runCtx context.Context) {
	m.Loop.People = hub.NewPeople(m.Store, m.Clock)
	m.Loop.Webhooks = hub.NewWebhooks(m.Store, m.Clock)
	m.Loop.Dispatcher = webhook.New(m.Loop.Webhooks, webhook.Options{Logger: m.Logger})
	m.Loop.Inbox = hub.NewInbox(m.Store, m.Clock, m.Config, hub.InboxOptions{Sink: m.Loop.Dispatcher},
		m.Service.Waiters(), m.Service.Feed())
	m.metrics.CounterFunc("webhook_items_dropped_total", "Inbox items not sent to the webhooks because their queue was full (a receiver too slow or down).", func() float64 {
		return float64(m.Loop.Dispatcher.Dropped())
	})
	m.goRun(func() error { return m.Loop.Inbox.Run(runCtx) })
	m.goRun(func() error { return m.Loop.Dispatcher.Run(runCtx) })
}

// serverLoop is the loop as the gRPC handlers see it.
func (m *Main) serverLoop() server.Loop {
	return server.Loop{Inbox: m.Loop.Inbox, People: m.Loop.People, Webhooks: m.Loop.Webhooks}
}
