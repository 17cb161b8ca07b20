package webhook_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
	"github.com/agenthub/hub/internal/webhook"
)

// rig is the webhooks service on a temporary SQLite file and a dispatcher
// running over it.
type rig struct {
	hooks *hub.Webhooks
	d     *webhook.Dispatcher
	stop  func()
}

func newRig(t *testing.T, opts webhook.Options) *rig {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hub.DefaultConfig()
	hooks := hub.NewWebhooks(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	d := webhook.New(hooks, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	r := &rig{hooks: hooks, d: d, stop: func() { cancel(); <-done }}
	t.Cleanup(func() { r.stop(); db.Close() })
	return r
}

func (r *rig) add(t *testing.T, url, secret string, kinds ...hub.ItemKind) *hub.Webhook {
	t.Helper()
	w, err := r.hooks.CreateWebhook(context.Background(), &hub.Webhook{URL: url, Secret: secret, Kinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// logOf waits until the webhook's log holds n entries and returns them.
func (r *rig) logOf(t *testing.T, id int64, n int) []*hub.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := r.hooks.Deliveries(context.Background(), id, 200)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) >= n {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %d's log has %d entries after 10 s, want %d", id, len(ds), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func item(id int64, kind hub.ItemKind) *hub.InboxItem {
	return &hub.InboxItem{ID: id, Kind: kind, AgentName: "ann", Project: "default", Title: "Allow Bash(npm test)?",
		Body: `{"command":"npm test"}`, Tool: "Bash", Urgency: hub.UrgencyUrgent, State: hub.ItemOpen, CreatedAt: time.Now()}
}

func TestWebhookSignedJSONWithText(t *testing.T) {
	const secret = "a-secret-of-the-receiver"
	type got struct {
		body []byte
		sig  string
	}
	gotc := make(chan got, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotc <- got{b, r.Header.Get(webhook.SignatureHeader)}
	}))
	defer recv.Close()
	r := newRig(t, webhook.Options{})
	w := r.add(t, recv.URL+"/hook", secret, hub.KindApproval)
	r.d.ItemOpened(item(7, hub.KindQuestion)) // not its kind: never sent
	r.d.ItemOpened(item(8, hub.KindApproval))
	g := <-gotc
	// The receiver checks the signature the way a receiver would: its own HMAC.
	if want := webhook.Sign(secret, g.body); !hmac.Equal([]byte(g.sig), []byte(want)) {
		t.Fatalf("signature %q, want %q", g.sig, want)
	}
	if webhook.Sign("another-secret-entirely", g.body) == g.sig {
		t.Fatal("the signature does not depend on the secret")
	}
	var p webhook.Payload
	if err := json.Unmarshal(g.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Item.ID != 8 || p.Event != "inbox.approval" || p.Hook != w.ID {
		t.Errorf("payload = %+v, want item 8, event inbox.approval", p)
	}
	for _, want := range []string{"URGENT", "Approval needed", "ann", "Allow Bash(npm test)?", "hubctl inbox answer 8"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("text %q lacks %q", p.Text, want)
		}
	}
	ds := r.logOf(t, w.ID, 1)
	if ds[0].Status != hub.DeliveryDelivered || ds[0].Attempts != 1 || ds[0].Code != 200 || ds[0].ItemID != 8 {
		t.Errorf("log = %+v, want item 8 delivered at the first attempt", ds[0])
	}
	select {
	case g := <-gotc:
		t.Errorf("a second delivery reached the receiver: %s", g.body)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestWebhookRetriesAfterA500(t *testing.T) {
	var calls atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusInternalServerError)
		}
	}))
	defer recv.Close()
	clock := hub.NewFakeClock(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	r := newRig(t, webhook.Options{Clock: clock}) // waits of 1, 2 and 4 s between attempts
	w := r.add(t, recv.URL, "0123456789abcdef")
	r.d.ItemOpened(item(1, hub.KindApproval))
	for _, wait := range []time.Duration{time.Second, 2 * time.Second} {
		for clock.Timers() == 0 { // the dispatcher waits before its next attempt
			time.Sleep(time.Millisecond)
		}
		clock.Advance(wait)
	}
	ds := r.logOf(t, w.ID, 1)
	if ds[0].Status != hub.DeliveryDelivered || ds[0].Attempts != 3 || calls.Load() != 3 {
		t.Errorf("log = %+v after %d calls, want delivered at the third attempt", ds[0], calls.Load())
	}
	// A 4xx other than 408/429 is the receiver's refusal: not retried.
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such hook", http.StatusNotFound) }))
	defer gone.Close()
	w2 := r.add(t, gone.URL, "0123456789abcdef")
	r.d.ItemOpened(item(2, hub.KindApproval))
	ds = r.logOf(t, w2.ID, 1)
	if ds[0].Status != hub.DeliveryFailed || ds[0].Attempts != 1 || ds[0].Code != 404 || ds[0].Error == "" {
		t.Errorf("log = %+v, want failed after one attempt with the 404", ds[0])
	}
}

// A receiver that hangs never holds the hub up: ItemOpened returns at
// once (the queue drops what does not fit, counted), and the other
// webhooks are still served.
func TestWebhookHangingReceiverBlocksNothing(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer once.Do(func() { close(release) })
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	r := newRig(t, webhook.Options{Queue: 8, Timeout: time.Minute, Backoff: []time.Duration{}})
	bad := r.add(t, hang.URL, "0123456789abcdef")
	good := r.add(t, ok.URL, "0123456789abcdef")
	start := time.Now()
	for i := range 200 {
		r.d.ItemOpened(item(int64(i+1), hub.KindApproval))
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("200 items took %v to hand over with a hanging receiver, want at once", d)
	}
	// The hanging receiver's queue (8) overflowed: its drops are counted
	// under its ID and written to its log.
	if ds := r.logOf(t, bad.ID, 1); ds[0].Status != hub.DeliveryDropped {
		t.Errorf("hanging receiver's log = %+v, want drops", ds[0])
	}
	if n := r.d.Dropped()[strconv.FormatInt(bad.ID, 10)]; n == 0 {
		t.Errorf("drops = %v: none counted for webhook %d", r.d.Dropped(), bad.ID)
	}
	// The good receiver is served all the while.
	deadline := time.Now().Add(10 * time.Second)
	for delivered := false; !delivered; time.Sleep(5 * time.Millisecond) {
		for _, d := range r.logOf(t, good.ID, 1) {
			delivered = delivered || d.Status == hub.DeliveryDelivered
		}
		if !delivered && time.Now().After(deadline) {
			t.Fatal("the good receiver got nothing in 10 s beside the hanging one")
		}
	}
	once.Do(func() { close(release) })
}

// A receiver that hangs delays no other webhook: every item reaches the
// healthy receiver while the hanging one holds its first delivery (on one
// shared queue the hanging receiver took every delivery slot for its
// attempts' time limit, a minute here).
func TestWebhookHangingReceiverDelaysNoOther(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	r := newRig(t, webhook.Options{Timeout: time.Minute})
	r.add(t, hang.URL, "0123456789abcdef")
	good := r.add(t, ok.URL, "0123456789abcdef")
	for i := range 20 {
		r.d.ItemOpened(item(int64(i+1), hub.KindApproval))
	}
	ds := r.logOf(t, good.ID, 20)
	for _, d := range ds {
		if d.Status != hub.DeliveryDelivered {
			t.Errorf("healthy receiver's log has %+v", d)
		}
	}
}

// A flood of one agent's items drops that agent's items, never another
// agent's urgent one, which goes first.
func TestWebhookFloodKeepsAnotherAgentsUrgentItem(t *testing.T) {
	gate := make(chan struct{})
	var mu sync.Mutex
	var order []int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		var p webhook.Payload
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &p)
		mu.Lock()
		order = append(order, p.Item.ID)
		mu.Unlock()
	}))
	defer recv.Close()
	var once sync.Once
	defer once.Do(func() { close(gate) })
	r := newRig(t, webhook.Options{Queue: 8})
	w := r.add(t, recv.URL, "0123456789abcdef")
	const flood = 150
	for i := range flood {
		it := item(int64(i+1), hub.KindApproval)
		it.AgentID, it.AgentName, it.Urgency = 1, "flood", hub.UrgencyNormal
		r.d.ItemOpened(it)
	}
	urgent := item(1000, hub.KindApproval)
	urgent.AgentID, urgent.AgentName = 2, "bea"
	r.d.ItemOpened(urgent)
	// Every item but the one under way and the 8 queued is dropped and
	// logged: 142 (143 when the first had not left the queue yet).
	r.logOf(t, w.ID, flood+1-9)
	once.Do(func() { close(gate) })
	ds := r.logOf(t, w.ID, flood+1)
	mu.Lock()
	defer mu.Unlock()
	if len(order) < 2 || order[0] != 1000 && order[1] != 1000 {
		t.Errorf("delivered in the order %v, want the other agent's urgent item 1000 first after the one under way", order)
	}
	drops := 0
	for _, d := range ds {
		if d.Status == hub.DeliveryDropped {
			drops++
			if d.ItemID == 1000 {
				t.Errorf("the urgent item was dropped: %+v", d)
			}
		}
	}
	if got := r.d.Dropped()[strconv.FormatInt(w.ID, 10)]; drops < flood+1-9 || got != int64(drops) || drops+len(order) != flood+1 {
		t.Errorf("%d drops logged, %d counted, %d delivered; want %d items, at most 9 delivered", drops, got, len(order), flood+1)
	}
}

// What agents write reaches chat as text: Slack's and Mattermost's markup
// in the "text" field is inert, and the item's own fields stay as given.
func TestWebhookTextEscapesChatMarkup(t *testing.T) {
	it := item(3, hub.KindQuestion)
	it.AgentName = "<!here>"
	it.Title = "<!channel> <https://evil.example/login|Open the Agent Hub dashboard> @channel @here @ALL, & @allison"
	it.Options = []string{"<!everyone>", "@all"}
	text := webhook.Text(it)
	for _, bad := range []string{"<!channel>", "<!here>", "<!everyone>", "<https://", "|Open the Agent Hub dashboard>", "@channel", "@here", "@ALL", "@all\n", "@all "} {
		if strings.Contains(text, bad) {
			t.Errorf("text %q carries %q as the chat would read it", text, bad)
		}
	}
	for _, want := range []string{"&lt;!channel&gt;", "&lt;https://evil.example/login|Open the Agent Hub dashboard&gt;", " &amp; ", "@allison", "&lt;!here&gt;"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}

	got := make(chan []byte, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer recv.Close()
	r := newRig(t, webhook.Options{})
	r.add(t, recv.URL, "0123456789abcdef")
	r.d.ItemOpened(it)
	var p webhook.Payload
	if err := json.Unmarshal(<-got, &p); err != nil {
		t.Fatal(err)
	}
	if p.Text != text || p.Item.Title != it.Title || p.Item.Agent != it.AgentName || p.Item.Options[0] != "<!everyone>" {
		t.Errorf("payload = %+v: want the text escaped and the item's fields raw", p)
	}
}

// A budget item reads as what was reached and how to answer it; a
// webhook that names no kinds hears it.
func TestWebhookTextOfBudget(t *testing.T) {
	it := item(9, hub.KindBudget)
	it.Title = "Budget of agent ann reached by ann: $10.20 of $10.00"
	text := webhook.Text(it)
	for _, want := range []string{"URGENT ann (default): Budget of agent ann reached", "hubctl inbox answer 9 raise --usd-per-day N", "or lift"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
	if w := (&hub.Webhook{}); !w.Wants(it) {
		t.Error("a webhook naming no kinds does not hear a budget item")
	}
}
