// Package webhook delivers new inbox items to the admin's webhooks: a JSON
// body with a "text" field (what a Slack- or Mattermost-compatible incoming
// webhook shows), signed with the webhook's secret in
// X-Hub-Signature-256 ("sha256=" and the hex HMAC-SHA256 of the body),
// retried with backoff, each outcome written to the delivery log. It never
// blocks the hub: items wait in a bounded queue (an item that finds it
// full is dropped and counted), and deliveries run on goroutines of their
// own, a few at a time, tracked by Run.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// SignatureHeader carries the body's signature.
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the signature header's value for body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Store is what the dispatcher reads and writes (hub.Webhooks).
type Store interface {
	// Targets returns the webhooks that hear of it.
	Targets(ctx context.Context, it *hub.InboxItem) ([]*hub.Webhook, error)
	// LogDelivery records one delivery's outcome.
	LogDelivery(ctx context.Context, d *hub.WebhookDelivery) error
	// Now is the time deliveries are logged at.
	Now() time.Time
}

// Options configure a Dispatcher. Zero values take the defaults.
type Options struct {
	Queue      int             // items waiting at most (default 256)
	Concurrent int             // deliveries running at once (default 4)
	Backoff    []time.Duration // waits between attempts (default 1, 2, 4, 8 s: five attempts)
	Timeout    time.Duration   // one attempt's time limit (default 10 s)
	Client     *http.Client    // default: one with no redirects followed
	Logger     *slog.Logger
	UserAgent  string
}

// Dispatcher delivers items to webhooks. It implements hub.ItemSink.
type Dispatcher struct {
	store   Store
	opts    Options
	queue   chan *hub.InboxItem
	dropped atomic.Int64
	slots   chan struct{}
	wg      sync.WaitGroup
}

// New returns a dispatcher over store; run it with Run.
func New(store Store, opts Options) *Dispatcher {
	if opts.Queue <= 0 {
		opts.Queue = 256
	}
	if opts.Concurrent <= 0 {
		opts.Concurrent = 4
	}
	if opts.Backoff == nil {
		opts.Backoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "agent-hub-webhook"
	}
	return &Dispatcher{store: store, opts: opts, queue: make(chan *hub.InboxItem, opts.Queue), slots: make(chan struct{}, opts.Concurrent)}
}

// ItemOpened queues it for delivery and returns at once; with the queue
// full, the item is dropped and counted (Dropped).
func (d *Dispatcher) ItemOpened(it *hub.InboxItem) {
	select {
	case d.queue <- it:
	default:
		d.dropped.Add(1)
		d.opts.Logger.Warn("webhook queue full: item not delivered", "item", it.ID, "queue", cap(d.queue))
	}
}

// Dropped returns how many items found the queue full.
func (d *Dispatcher) Dropped() int64 { return d.dropped.Load() }

// Run delivers queued items until ctx ends, then waits for the deliveries
// under way (they end at ctx's end too: an attempt is cut, no retry).
func (d *Dispatcher) Run(ctx context.Context) error {
	defer d.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case it := <-d.queue:
			targets, err := d.store.Targets(ctx, it)
			if err != nil {
				d.opts.Logger.Warn("webhook: read the webhooks", "item", it.ID, "err", err)
				continue
			}
			for _, w := range targets {
				select {
				case d.slots <- struct{}{}:
				case <-ctx.Done():
					return nil
				}
				d.wg.Add(1)
				go func() {
					defer d.wg.Done()
					defer func() { <-d.slots }()
					d.deliver(ctx, w, it)
				}()
			}
		}
	}
}

// Payload is the JSON body a webhook receives.
type Payload struct {
	Text  string `json:"text"`
	Event string `json:"event"`
	Item  Item   `json:"item"`
	Sent  string `json:"sent_at"`
	Hook  int64  `json:"webhook_id"`
}

// Item is the item in a Payload.
type Item struct {
	ID        int64    `json:"id"`
	Kind      string   `json:"kind"`
	Agent     string   `json:"agent"`
	Project   string   `json:"project"`
	Title     string   `json:"title"`
	Body      string   `json:"body,omitempty"`
	Tool      string   `json:"tool,omitempty"`
	Options   []string `json:"options,omitempty"`
	Urgency   string   `json:"urgency"`
	CreatedAt string   `json:"created_at"`
}

// Text is the line a chat tool shows for it.
func Text(it *hub.InboxItem) string {
	var sb strings.Builder
	if it.Urgency == hub.UrgencyUrgent {
		sb.WriteString("URGENT ")
	}
	switch it.Kind {
	case hub.KindApproval:
		fmt.Fprintf(&sb, "Approval needed: %s (%s) asks %s", it.AgentName, it.Project, it.Title)
		fmt.Fprintf(&sb, "\nAnswer: hubctl inbox answer %d allow|deny, or in the dashboard's inbox.", it.ID)
	case hub.KindQuestion:
		fmt.Fprintf(&sb, "Question from %s (%s): %s", it.AgentName, it.Project, it.Title)
		if len(it.Options) > 0 {
			fmt.Fprintf(&sb, "\nOptions: %s", strings.Join(it.Options, " / "))
		}
		fmt.Fprintf(&sb, "\nAnswer: hubctl inbox answer %d 'TEXT', or in the dashboard's inbox.", it.ID)
	default:
		fmt.Fprintf(&sb, "%s (%s) is waiting for a person: %s", it.AgentName, it.Project, it.Title)
	}
	return sb.String()
}

// deliver sends it to w, retrying with backoff, and logs the outcome.
func (d *Dispatcher) deliver(ctx context.Context, w *hub.Webhook, it *hub.InboxItem) {
	rec := &hub.WebhookDelivery{WebhookID: w.ID, ItemID: it.ID, CreatedAt: d.store.Now()}
	body, _ := json.Marshal(Payload{ // plain values: always marshal
		Text: Text(it), Event: "inbox." + string(it.Kind), Hook: w.ID, Sent: rec.CreatedAt.UTC().Format(time.RFC3339Nano),
		Item: Item{ID: it.ID, Kind: string(it.Kind), Agent: it.AgentName, Project: it.Project, Title: it.Title, Body: it.Body,
			Tool: it.Tool, Options: it.Options, Urgency: string(it.Urgency), CreatedAt: it.CreatedAt.UTC().Format(time.RFC3339Nano)},
	})
	sig := Sign(w.Secret, body)
	for attempt := 0; ; attempt++ {
		rec.Attempts = attempt + 1
		code, err := d.attempt(ctx, w.URL, body, sig, fmt.Sprintf("%d-%d", it.ID, w.ID))
		rec.Code = code
		if err == nil {
			rec.Status, rec.Error = hub.DeliveryDelivered, ""
			break
		}
		rec.Status, rec.Error = hub.DeliveryFailed, err.Error()
		if !retryable(code) || attempt >= len(d.opts.Backoff) || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(d.opts.Backoff[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	rec.DoneAt = d.store.Now()
	if err := d.store.LogDelivery(context.WithoutCancel(ctx), rec); err != nil {
		d.opts.Logger.Warn("webhook: log a delivery", "webhook", w.ID, "item", it.ID, "err", err)
	}
}

// retryable reports whether an attempt that ended with HTTP status code
// (0: no answer) may succeed later.
func retryable(code int) bool {
	return code == 0 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// attempt POSTs body once and returns the status; an error unless 2xx.
func (d *Dispatcher) attempt(ctx context.Context, url string, body []byte, sig, delivery string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.opts.UserAgent)
	req.Header.Set(SignatureHeader, sig)
	req.Header.Set("X-Hub-Delivery", delivery)
	res, err := d.opts.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post: %w", err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("the receiver answered %s", res.Status)
	}
	return res.StatusCode, nil
}
