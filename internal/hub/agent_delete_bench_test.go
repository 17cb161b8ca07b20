package hub_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// timedStore records how long each write transaction took (the writer is
// held for about that long: the transaction and its commit).
type timedStore struct {
	hub.Store
	mu      sync.Mutex
	updates []time.Duration
}

func (s *timedStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	start := time.Now()
	err := s.Store.Update(ctx, fn)
	d := time.Since(start)
	s.mu.Lock()
	s.updates = append(s.updates, d)
	s.mu.Unlock()
	return err
}

// BenchmarkDeleteAgent deletes an agent that sent N messages (to another
// agent, a mention every other one) and received N (each also delivered
// to a third agent), on each store, while another agent posts one
// message after another. Reported: the whole deletion (ms/delete), its
// longest write transaction (max-batch-ms, what the writer is held for at
// most), its median and 99th percentile, its number of write transactions, and the
// slowest post of the other agent during it (max-post-ms).
//
// PostgreSQL runs when HUB_TEST_DATABASE_URL is set:
//
//	go test ./internal/hub/ -run '^$' -bench DeleteAgent/sqlite -benchtime 1x
//	scripts/ci-postgres.sh -- go test ./internal/hub/ -run '^$' -bench DeleteAgent/postgres -benchtime 1x
func BenchmarkDeleteAgent(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) hub.Store
	}{
		{"sqlite", func(b *testing.B) hub.Store {
			db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "hub.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return db
		}},
		{"postgres", func(b *testing.B) hub.Store {
			db, err := postgres.Open(context.Background(), pgtest.Schema(b), postgres.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			return db
		}},
	}
	for _, st := range stores {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/messages=%d", st.name, n), func(b *testing.B) {
				for range b.N {
					b.StopTimer() // only the deletion is timed
					db := st.open(b)
					benchDeleteAgent(b, db, n)
					db.Close()
				}
			})
		}
	}
}

func benchDeleteAgent(b *testing.B, db hub.Store, n int) {
	ctx := context.Background()
	ts := &timedStore{Store: db}
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	svc := newServices(b, ts, hub.NewFakeClock(coreT0), cfg)
	var as []*hub.Agent
	for _, name := range []string{"alice", "bob", "carol"} {
		a, _, err := svc.CreateAgent(ctx, hub.CreateAgentRequest{Name: name})
		if err != nil {
			b.Fatal(err)
		}
		as = append(as, a)
	}
	alice, bob, carol := as[0], as[1], as[2]
	for done := 0; done < n; done += 1000 {
		err := db.Update(ctx, func(tx hub.Tx) error {
			var ms []*hub.Message
			var ds [][]hub.Delivery
			for i := range min(1000, n-done) {
				ms = append(ms,
					&hub.Message{From: "bob", To: []string{"alice"}, Body: "status report from bob", Kind: hub.KindMessage, CreatedAt: coreT0},
					&hub.Message{From: "carol", To: []string{"bob", "alice"}, Body: "question for bob", Kind: hub.KindMessage, CreatedAt: coreT0})
				ds = append(ds, []hub.Delivery{{AgentID: alice.ID, Mention: i%2 == 0}}, []hub.Delivery{{AgentID: bob.ID}, {AgentID: alice.ID}})
			}
			return tx.InsertMessages(ms, ds)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := svc.SetAgentDisabled(ctx, "bob", true); err != nil {
		b.Fatal(err)
	}
	ts.mu.Lock()
	ts.updates = nil
	ts.mu.Unlock()

	// The other agent posts through a service of its own, as another
	// client of the same store: its posts are not counted as the
	// deletion's write transactions.
	otherCore := hub.NewCore(db, hub.NewFakeClock(coreT0), cfg, hub.NewWaiters(cfg.WaitLimits, hub.NewFakeClock(coreT0)))
	other := hub.NewMessages(otherCore, hub.NewReceipts(otherCore))
	stop := make(chan struct{})
	var maxPost time.Duration
	var posts sync.WaitGroup
	posts.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if _, err := other.Post(ctx, carol, "", hub.PostRequest{To: []string{"alice"}, Body: "meanwhile"}); err != nil {
				b.Error(err)
				return
			}
			maxPost = max(maxPost, time.Since(start))
			time.Sleep(time.Millisecond)
		}
	})
	b.StartTimer()
	start := time.Now()
	d, err := svc.DeleteAgent(ctx, "bob")
	took := time.Since(start)
	b.StopTimer()
	close(stop)
	posts.Wait()
	if err != nil || d.MessagesDeleted != int64(n) {
		b.Fatalf("DeleteAgent = %+v, %v; want %d messages deleted", d, err, n)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	sorted := slices.Sorted(slices.Values(ts.updates))
	b.ReportMetric(float64(took.Milliseconds()), "ms/delete")
	b.ReportMetric(float64(sorted[len(sorted)/2].Microseconds())/1000, "p50-batch-ms")
	b.ReportMetric(float64(sorted[len(sorted)*99/100].Microseconds())/1000, "p99-batch-ms")
	b.ReportMetric(float64(sorted[len(sorted)-1].Microseconds())/1000, "max-batch-ms")
	b.ReportMetric(float64(len(ts.updates)), "writes")
	b.ReportMetric(float64(maxPost.Microseconds())/1000, "max-post-ms")
}
