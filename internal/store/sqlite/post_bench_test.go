package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkGroupCommitPosts is the store's share of a post as the hub's
// throughput run makes it: 32 senders each posting a short message to one
// agent by name, their writes grouped into shared commits; it reports the
// process CPU per post:
//
//	go test ./internal/store/sqlite -run '^$' -bench GroupCommitPosts -benchtime 50000x -count 3
func BenchmarkGroupCommitPosts(b *testing.B) {
	db := newDB(b)
	const senders = 32
	for i := range senders {
		createAgent(b, db, fmt.Sprintf("agent-%d", i))
	}
	ctx := hub.RowLocked(context.Background())
	var next atomic.Int64
	cpu0 := cpuTime(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := fmt.Sprintf("agent-%d", (s+1)%senders)
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				err := db.Update(ctx, func(tx hub.Tx) error {
					a, err := tx.AddresseeByName(to)
					if err != nil {
						return err
					}
					m := &hub.Message{From: "x", To: []string{to}, Body: fmt.Sprintf("throughput %d", n), Kind: hub.KindMessage, CreatedAt: t0}
					return tx.InsertMessage(m, []hub.Delivery{{AgentID: a.ID}})
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/post")
}
