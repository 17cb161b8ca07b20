// Package webhook delivers new inbox items to the admin's webhooks: a JSON
// body with a "text" field (what a Slack- or Mattermost-compatible incoming
// webhook shows, its chat markup escaped), signed with the webhook's
// secret in X-Hub-Signature-256 ("sha256=" and the hex HMAC-SHA256 of the
// body), retried with backoff, each outcome written to the delivery log.
// It never blocks the hub, and no receiver delays another's: each webhook
// has a bounded queue of its own and one delivery at a time on a goroutine
// of its own, urgent items first, the agents taking turns. An item that
// finds its webhook's queue full pushes out the newest normal item of the
// agent holding the most (an urgent one only when none is normal); the
// drop is counted per webhook and written to its delivery log.
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
	"strconv"
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
	Queue   int             // items waiting per webhook at most (default 256)
	Intake  int             // new items waiting to be routed to their webhooks (default 4,096)
	Backoff []time.Duration // waits between attempts (default 1, 2, 4 s: four attempts)
	Timeout time.Duration   // one attempt's time limit (default 5 s)
	Client  *http.Client    // default: one with no redirects followed
	Logger  *slog.Logger
	// UserAgent is the User-Agent header of every delivery.
	UserAgent string
	// Clock runs the waits between attempts (the system clock when nil).
	Clock hub.Clock
}

// intakeLabel is the webhook label of the items dropped before they were
// routed to any webhook (the hub's intake full).
const intakeLabel = "intake"

// Dispatcher delivers items to webhooks. It implements hub.ItemSink.
type Dispatcher struct {
	store   Store
	opts    Options
	intake  chan *hub.InboxItem
	dropped atomic.Int64 // items dropped at the intake
	wg      sync.WaitGroup

	mu     sync.Mutex
	queues map[int64]*hookQueue
}

// New returns a dispatcher over store; run it with Run.
func New(store Store, opts Options) *Dispatcher {
	if opts.Queue <= 0 {
		opts.Queue = 256
	}
	if opts.Intake <= 0 {
		opts.Intake = 4096
	}
	if opts.Backoff == nil {
		opts.Backoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
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
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	return &Dispatcher{store: store, opts: opts, intake: make(chan *hub.InboxItem, opts.Intake), queues: map[int64]*hookQueue{}}
}

// ItemOpened hands it to the dispatcher and returns at once; with the
// intake full, the item is dropped and counted (Dropped).
func (d *Dispatcher) ItemOpened(it *hub.InboxItem) {
	select {
	case d.intake <- it:
	default:
		d.dropped.Add(1)
		d.opts.Logger.Warn("webhook intake full: item not delivered", "item", it.ID, "intake", cap(d.intake))
	}
}

// Dropped returns how many items were dropped, per webhook ID, and at the
// intake under intakeLabel.
func (d *Dispatcher) Dropped() map[string]int64 {
	out := map[string]int64{}
	if n := d.dropped.Load(); n > 0 {
		out[intakeLabel] = n
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, q := range d.queues {
		if q.dropped > 0 {
			out[strconv.FormatInt(id, 10)] = q.dropped
		}
	}
	return out
}

// Run routes new items to their webhooks' queues until ctx ends, then
// waits for the deliveries under way (they end at ctx's end too: an
// attempt is cut, no retry).
func (d *Dispatcher) Run(ctx context.Context) error {
	defer d.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case it := <-d.intake:
			targets, err := d.store.Targets(ctx, it)
			if err != nil {
				d.opts.Logger.Warn("webhook: read the webhooks", "item", it.ID, "err", err)
				continue
			}
			for _, w := range targets {
				if out := d.enqueue(ctx, w, it); out != nil {
					d.opts.Logger.Warn("webhook queue full: item not delivered", "webhook", w.ID, "item", out.ID, "agent", out.AgentName, "queue", d.opts.Queue)
					now := d.store.Now()
					rec := &hub.WebhookDelivery{WebhookID: w.ID, ItemID: out.ID, Status: hub.DeliveryDropped,
						Error: fmt.Sprintf("the webhook's queue held %d items", d.opts.Queue), CreatedAt: now, DoneAt: now}
					if err := d.store.LogDelivery(ctx, rec); err != nil && ctx.Err() == nil {
						d.opts.Logger.Warn("webhook: log a drop", "webhook", w.ID, "item", out.ID, "err", err)
					}
				}
			}
		}
	}
}

// enqueue adds it to w's queue, starting the webhook's sender when idle,
// and returns the item the queue dropped to make room, if any.
func (d *Dispatcher) enqueue(ctx context.Context, w *hub.Webhook, it *hub.InboxItem) *hub.InboxItem {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queues[w.ID]
	if q == nil {
		q = &hookQueue{}
		d.queues[w.ID] = q
	}
	q.w = w
	out := q.push(it, d.opts.Queue)
	if out != nil {
		q.dropped++
	}
	if !q.sending {
		q.sending = true
		d.wg.Add(1)
		go d.send(ctx, q)
	}
	return out
}

// send delivers q's items one at a time until q is empty or ctx ends.
func (d *Dispatcher) send(ctx context.Context, q *hookQueue) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		it, w := q.pop(), q.w
		if it == nil || ctx.Err() != nil {
			q.sending = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		d.deliver(ctx, w, it)
	}
}

// hookQueue is one webhook's items waiting: urgent before normal, and
// within each, the agents in turn, each agent's items oldest first.
type hookQueue struct {
	w              *hub.Webhook // as last read
	urgent, normal fairQueue
	dropped        int64
	sending        bool // its sender runs
}

// push adds it and, past limit items, drops one (returned): the newest
// normal item of the agent with the most normal items, else the newest
// urgent item of the agent with the most urgent ones.
func (q *hookQueue) push(it *hub.InboxItem, limit int) *hub.InboxItem {
	if it.Urgency == hub.UrgencyUrgent {
		q.urgent.push(it)
	} else {
		q.normal.push(it)
	}
	if q.urgent.n+q.normal.n <= limit {
		return nil
	}
	if q.normal.n > 0 {
		return q.normal.dropNewestOfLargest()
	}
	return q.urgent.dropNewestOfLargest()
}

// pop returns the next item to send, nil when none waits.
func (q *hookQueue) pop() *hub.InboxItem {
	if it := q.urgent.pop(); it != nil {
		return it
	}
	return q.normal.pop()
}

// fairQueue holds items per agent; pop takes the agents in turn.
type fairQueue struct {
	byAgent map[int64][]*hub.InboxItem
	turn    []int64 // agents with items, the next to send first
	n       int
}

func (f *fairQueue) push(it *hub.InboxItem) {
	if f.byAgent == nil {
		f.byAgent = map[int64][]*hub.InboxItem{}
	}
	if len(f.byAgent[it.AgentID]) == 0 {
		f.turn = append(f.turn, it.AgentID)
	}
	f.byAgent[it.AgentID] = append(f.byAgent[it.AgentID], it)
	f.n++
}

func (f *fairQueue) pop() *hub.InboxItem {
	if len(f.turn) == 0 {
		return nil
	}
	a := f.turn[0]
	items := f.byAgent[a]
	it := items[0]
	items[0] = nil
	f.turn = f.turn[1:]
	if items = items[1:]; len(items) > 0 {
		f.byAgent[a] = items
		f.turn = append(f.turn, a)
	} else {
		delete(f.byAgent, a)
	}
	f.n--
	return it
}

func (f *fairQueue) dropNewestOfLargest() *hub.InboxItem {
	var big int64
	most := 0
	for _, a := range f.turn {
		if n := len(f.byAgent[a]); n > most {
			big, most = a, n
		}
	}
	if most == 0 {
		return nil
	}
	items := f.byAgent[big]
	it := items[len(items)-1]
	items[len(items)-1] = nil
	if items = items[:len(items)-1]; len(items) > 0 {
		f.byAgent[big] = items
	} else {
		delete(f.byAgent, big)
		for i, a := range f.turn {
			if a == big {
				f.turn = append(f.turn[:i], f.turn[i+1:]...)
				break
			}
		}
	}
	f.n--
	return it
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

// Text is the line a chat tool shows for it, escaped for the chat (escape).
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
	case hub.KindBudget:
		fmt.Fprintf(&sb, "%s (%s): %s", it.AgentName, it.Project, it.Title)
		fmt.Fprintf(&sb, "\nAnswer: hubctl inbox answer %d raise --usd-per-day N (or --tokens-per-day N), or lift for the day.", it.ID)
	default:
		fmt.Fprintf(&sb, "%s (%s) is waiting for a person: %s", it.AgentName, it.Project, it.Title)
	}
	return escape(sb.String())
}

// chatMarkup turns what Slack and Mattermost read as markup into text
// they show as is: the three characters Slack's formatting asks to escape
// (so <!channel>, <!here> and <https://…|label> are inert), and the
// mentions that notify a whole channel in Mattermost (@channel, @here,
// @all), a word joiner after their @.
var chatMarkup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape returns s with the chat markup of Slack and Mattermost made
// inert. Only the "text" field is escaped; the item's fields in the
// payload stay as the agent gave them.
func escape(s string) string {
	s = chatMarkup.Replace(s)
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteByte(s[i])
		if s[i] == '@' && massMention(s[i+1:]) {
			sb.WriteString("\u2060")
		}
	}
	return sb.String()
}

// massMention reports whether rest, the text after an @, starts with a
// mention of a whole channel ending at a word's end.
func massMention(rest string) bool {
	for _, w := range []string{"channel", "here", "all", "everyone"} {
		if len(rest) >= len(w) && strings.EqualFold(rest[:len(w)], w) {
			if len(rest) == len(w) || !isWordByte(rest[len(w)]) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
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
		t := d.opts.Clock.NewTimer(d.opts.Backoff[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
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
