package hub

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// Webhooks tell chat tools (Slack- or Mattermost-compatible incoming
// webhooks, or any HTTP receiver) of new inbox items, signed with a secret
// the admin sets. This file holds their rules; webhook_service.go stores
// them and their delivery log. Delivery itself is internal/webhook's.

// Webhook is an HTTP receiver of inbox items.
type Webhook struct {
	ID       int64
	URL      string
	Kinds    []ItemKind // the kinds it hears; empty: approvals and questions
	Projects []string   // the projects it hears; empty: all
	Secret   string     // the HMAC-SHA256 key of its signature header
	// CreatedAt is when the admin added it.
	CreatedAt time.Time
}

// defaultKinds are the kinds a webhook that names none hears: what a
// person must answer. Agents waiting at their prompt (every turn's end)
// are heard only by a webhook that names needs_input.
var defaultKinds = []ItemKind{KindApproval, KindQuestion, KindBudget}

// Wants reports whether the webhook hears of item it.
func (w *Webhook) Wants(it *InboxItem) bool {
	kinds := w.Kinds
	if len(kinds) == 0 {
		kinds = defaultKinds
	}
	return slices.Contains(kinds, it.Kind) &&
		(len(w.Projects) == 0 || slices.Contains(w.Projects, it.Project))
}

// WebhookDelivery is one item sent, or tried, to one webhook: the delivery log.
type WebhookDelivery struct {
	ID        int64
	WebhookID int64
	ItemID    int64
	Status    string // delivered or failed
	Attempts  int
	Code      int    // the receiver's last HTTP status (0: none)
	Error     string // why the last attempt failed
	CreatedAt time.Time
	DoneAt    time.Time
}

// The statuses of a delivery.
const (
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"  // every attempt failed
	DeliveryDropped   = "dropped" // never sent: the webhook's queue was full
)

// CheckWebhook returns EINVALID unless w can be added, its URL and lists
// made canonical.
func CheckWebhook(w *Webhook) error {
	u, err := url.Parse(strings.TrimSpace(w.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Errorf(EINVALID, "url %q is not an http(s) URL: give the receiver's full address, such as https://chat.example.com/hooks/abc (no user:password part)", w.URL)
	}
	if len(w.URL) > 2000 {
		return Errorf(EINVALID, "url is %d bytes; the limit is 2000", len(w.URL))
	}
	w.URL = u.String()
	for _, k := range w.Kinds {
		switch k {
		case KindApproval, KindQuestion, KindNeedsInput, KindBudget:
		default:
			return Errorf(EINVALID, "kind %q is not an inbox kind: give approval, question, needs_input or budget (none: approval, question and budget)", k)
		}
	}
	w.Kinds = slices.Compact(slices.Sorted(slices.Values(w.Kinds)))
	for _, p := range w.Projects {
		if err := ValidateProjectName(p); err != nil {
			return err
		}
	}
	w.Projects = slices.Compact(slices.Sorted(slices.Values(w.Projects)))
	switch {
	case len(w.Secret) > 0 && len(w.Secret) < 16:
		return Errorf(EINVALID, "secret is %d bytes: give at least 16 (or none, and the hub makes one)", len(w.Secret))
	case len(w.Secret) > 256:
		return Errorf(EINVALID, "secret is %d bytes; the limit is 256", len(w.Secret))
	}
	return checkLine("secret", w.Secret)
}
