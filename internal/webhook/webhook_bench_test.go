package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
	"github.com/agenthub/hub/internal/webhook"
)

// benchRig is a dispatcher with its default options over a temporary
// SQLite file, and webhooks added to it.
func benchRig(b *testing.B) (*hub.Webhooks, *webhook.Dispatcher) {
	b.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := hub.DefaultConfig()
	hooks := hub.NewWebhooks(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	d := webhook.New(hooks, webhook.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done; db.Close() })
	return hooks, d
}

// arrivals is a receiver that reports each item's ID as it arrives, once
// open is closed.
func arrivals(b *testing.B, open <-chan struct{}) (*httptest.Server, chan int64) {
	got := make(chan int64, 100000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-open
		var p webhook.Payload
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &p)
		got <- p.Item.ID
	}))
	b.Cleanup(srv.Close)
	return srv, got
}

// BenchmarkWebhookHealthyBesideHanging measures how long a healthy
// webhook's items take to arrive while another webhook's receiver hangs
// (default options): ms/item on average and the longest (max-ms).
func BenchmarkWebhookHealthyBesideHanging(b *testing.B) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	var once sync.Once
	defer once.Do(func() { close(release) })
	open := make(chan struct{})
	close(open)
	good, got := arrivals(b, open)
	hooks, d := benchRig(b)
	for _, u := range []string{hang.URL, good.URL} {
		if _, err := hooks.CreateWebhook(context.Background(), &hub.Webhook{URL: u, Secret: "0123456789abcdef"}); err != nil {
			b.Fatal(err)
		}
	}
	var total, longest time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		d.ItemOpened(item(int64(i+1), hub.KindApproval))
		select {
		case <-got:
		case <-time.After(90 * time.Second):
			b.Fatalf("item %d did not reach the healthy receiver in 90 s", i+1)
		}
		took := time.Since(start)
		total += took
		longest = max(longest, took)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/item")
	b.ReportMetric(float64(longest.Milliseconds()), "max-ms")
	once.Do(func() { close(release) })
}

// BenchmarkWebhookFlood sends, per iteration, 300 normal items of one
// agent and then one urgent item of another to a webhook whose receiver
// answers only after all were handed over: urgent-kept is the share of
// the urgent items that arrived, delivered/op the items that did.
func BenchmarkWebhookFlood(b *testing.B) {
	hooks, d := benchRig(b)
	var open chan struct{}
	var mu sync.Mutex
	gate := func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return open }
	got := make(chan int64, 100000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate()
		var p webhook.Payload
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &p)
		got <- p.Item.ID
	}))
	defer srv.Close()
	if _, err := hooks.CreateWebhook(context.Background(), &hub.Webhook{URL: srv.URL, Secret: "0123456789abcdef"}); err != nil {
		b.Fatal(err)
	}
	kept, delivered := 0, 0
	id := int64(0)
	b.ResetTimer()
	for range b.N {
		mu.Lock()
		open = make(chan struct{})
		mu.Unlock()
		for range 300 {
			id++
			it := item(id, hub.KindApproval)
			it.AgentID, it.Urgency = 1, hub.UrgencyNormal
			d.ItemOpened(it)
		}
		id++
		urgent := item(id, hub.KindApproval)
		urgent.AgentID = 2
		d.ItemOpened(urgent)
		time.Sleep(500 * time.Millisecond) // the dispatcher routes what it was handed
		mu.Lock()
		close(open)
		mu.Unlock()
		for quiet := false; !quiet; {
			select {
			case x := <-got:
				delivered++
				if x == urgent.ID {
					kept++
				}
			case <-time.After(time.Second):
				quiet = true
			}
		}
	}
	b.ReportMetric(float64(kept)/float64(b.N), "urgent-kept")
	b.ReportMetric(float64(delivered)/float64(b.N), "delivered/op")
}
