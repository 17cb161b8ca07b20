package hub

import (
	"context"
	"time"
)

// WebhookTx stores webhooks and their delivery log.
type WebhookTx interface {
	// InsertWebhook inserts w and sets w.ID.
	InsertWebhook(w *Webhook) error
	// Webhooks returns every webhook, oldest first.
	Webhooks() ([]*Webhook, error)
	// DeleteWebhook deletes a webhook and its log. ENOTFOUND.
	DeleteWebhook(id int64) error
	// InsertWebhookDelivery logs d and sets d.ID, keeping the webhook's
	// newest keep entries only.
	InsertWebhookDelivery(d *WebhookDelivery, keep int) error
	// WebhookDeliveries returns a webhook's log (every webhook's for
	// 0), newest first.
	WebhookDeliveries(webhookID int64, limit int) ([]*WebhookDelivery, error)
}

// deliveriesKept is how many log entries each webhook keeps.
const deliveriesKept = 200

// Webhooks is the service of webhooks: the admin's list and the delivery log.
type Webhooks struct {
	*core
	store txs[webhooksTx] // the store methods it uses
}

// webhooksTx is what the webhooks' service reads and writes in one
// transaction.
type webhooksTx interface {
	WebhookTx
}

// NewWebhooks returns the webhooks' service.
func NewWebhooks(c *Core) *Webhooks {
	return &Webhooks{core: c.core, store: txsOf[webhooksTx](c.store)}
}

// CreateWebhook adds a webhook and returns it; without a secret, the hub
// makes one (shown in the reply once). Errors: EINVALID.
func (ws *Webhooks) CreateWebhook(ctx context.Context, w *Webhook) (*Webhook, error) {
	if w.Secret == "" {
		tok, _ := NewToken()
		w.Secret = "whs_" + tok[len(tokenPrefix):]
	}
	if err := CheckWebhook(w); err != nil {
		return nil, err
	}
	w.CreatedAt = ws.clock.Now()
	err := update(ctx, ws.store, func(tx webhooksTx) error { return tx.InsertWebhook(w) })
	return w, err
}

// ListWebhooks returns every webhook, oldest first.
func (ws *Webhooks) ListWebhooks(ctx context.Context) ([]*Webhook, error) {
	var out []*Webhook
	err := view(ctx, ws.store, func(tx webhooksTx) (err error) {
		out, err = tx.Webhooks()
		return err
	})
	return out, err
}

// DeleteWebhook deletes a webhook and its log. Errors: ENOTFOUND.
func (ws *Webhooks) DeleteWebhook(ctx context.Context, id int64) error {
	return update(ctx, ws.store, func(tx webhooksTx) error { return tx.DeleteWebhook(id) })
}

// Targets returns the webhooks that hear of it.
func (ws *Webhooks) Targets(ctx context.Context, it *InboxItem) ([]*Webhook, error) {
	all, err := ws.ListWebhooks(ctx)
	var out []*Webhook
	for _, w := range all {
		if w.Wants(it) {
			out = append(out, w)
		}
	}
	return out, err
}

// LogDelivery records one delivery's outcome at its end.
func (ws *Webhooks) LogDelivery(ctx context.Context, d *WebhookDelivery) error {
	if d.DoneAt.IsZero() {
		d.DoneAt = ws.clock.Now()
	}
	return update(ctx, ws.store, func(tx webhooksTx) error { return tx.InsertWebhookDelivery(d, deliveriesKept) })
}

// Deliveries returns a webhook's delivery log (every webhook's for 0),
// newest first, at most limit (default 50). Errors: EINVALID.
func (ws *Webhooks) Deliveries(ctx context.Context, webhookID int64, limit int) ([]*WebhookDelivery, error) {
	if limit < 0 || limit > deliveriesKept {
		return nil, Errorf(EINVALID, "limit %d is out of range: give 1-%d, or 0 for the default (50)", limit, deliveriesKept)
	}
	if limit == 0 {
		limit = 50
	}
	var out []*WebhookDelivery
	err := view(ctx, ws.store, func(tx webhooksTx) (err error) {
		out, err = tx.WebhookDeliveries(webhookID, limit)
		return err
	})
	return out, err
}

// Now returns the service's time (for delivery records).
func (ws *Webhooks) Now() time.Time { return ws.clock.Now() }
