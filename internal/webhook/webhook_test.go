package webhook_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
		ds, err := r.hooks.Deliveries(context.Background(), id, 0)
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
	r := newRig(t, webhook.Options{Backoff: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}})
	w := r.add(t, recv.URL, "0123456789abcdef")
	r.d.ItemOpened(item(1, hub.KindApproval))
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
	r := newRig(t, webhook.Options{Queue: 8, Concurrent: 4, Timeout: time.Minute, Backoff: []time.Duration{}})
	r.add(t, hang.URL, "0123456789abcdef")
	good := r.add(t, ok.URL, "0123456789abcdef")
	start := time.Now()
	for i := range 200 {
		r.d.ItemOpened(item(int64(i+1), hub.KindApproval))
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("200 items took %v to hand over with a hanging receiver, want at once", d)
	}
	if r.d.Dropped() == 0 {
		t.Error("nothing was dropped although the queue holds 8 and a receiver hangs")
	}
	// The good receiver got some: the hanging one holds at most its slots.
	if ds := r.logOf(t, good.ID, 1); ds[0].Status != hub.DeliveryDelivered {
		t.Errorf("good receiver's log = %+v", ds[0])
	}
	once.Do(func() { close(release) })
}
