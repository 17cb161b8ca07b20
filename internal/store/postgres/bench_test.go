package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// Figures for BENCHMARKS.md (a running PostgreSQL is needed):
//
//	HUB_TEST_DATABASE_URL=… go test -run '^$' -bench . -benchtime 2000x ./internal/store/postgres/

// BenchmarkPost measures posts through one store handle from parallel
// callers: one message to one agent per Update (write lock, counter row,
// NOTIFY, commit).
func BenchmarkPost(b *testing.B) {
	db := openTest(b, pgtest.Schema(b))
	ctx := context.Background()
	a := &hub.Agent{Name: "bob", CreatedAt: time.Unix(1, 0)}
	if err := db.Update(ctx, func(tx hub.Tx) error { return tx.CreateAgent(a, nil) }); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := &hub.Message{From: "alice", To: []string{"bob"}, Body: "hello", Kind: hub.KindMessage, CreatedAt: time.Now()}
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessage(m, []hub.Delivery{{AgentID: a.ID}}) }); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
}

// BenchmarkCrossReplicaWake measures, for a post through replica A, the
// time to the wake-up of a wait parked on replica B (NOTIFY, B's listener,
// the waiter's signal): from the post's call (p50-ms, p99-ms: the post's
// commit included) and from its return, the acknowledgement (ack-p50-ms,
// ack-p99-ms: zero when the wait was woken before it). Beside it, via=b,
// the same for a post through B itself (no NOTIFY on the path: what is
// left is the post and the machine).
func BenchmarkCrossReplicaWake(b *testing.B) {
	u := pgtest.Schema(b)
	a, r := newReplica(b, u, false), newReplica(b, u, true)
	alice, bob := a.agent(b, "alice"), r.agent(b, "bob")
	eventually(b, "B listening", func() bool { return backends(b, "hub listen "+r.db.schema) == 1 })
	ctx := context.Background()
	for _, via := range []struct {
		name string
		r    *replica
	}{{"a", a}, {"b", r}} {
		b.Run("via="+via.name, func(b *testing.B) {
			lat, ack := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
			for b.Loop() {
				w, err := r.waiters.Register(bob.ID, 0, nil)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := via.r.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "x"}); err != nil {
					b.Fatal(err)
				}
				acked := time.Now()
				<-w.C()
				lat, ack = append(lat, time.Since(start)), append(ack, time.Since(acked))
				w.Close()
			}
			for _, d := range []struct {
				name string
				lat  []time.Duration
			}{{"", lat}, {"ack-", ack}} {
				slices.Sort(d.lat)
				b.ReportMetric(float64(d.lat[len(d.lat)/2].Microseconds())/1000, d.name+"p50-ms")
				b.ReportMetric(float64(d.lat[len(d.lat)*99/100].Microseconds())/1000, d.name+"p99-ms")
			}
		})
	}
}

// BenchmarkPostReplicas measures posts through the service (recipient
// lookup, routing, insert) on one and on two store handles (replicas) of
// one database, 16 parallel posters spread evenly over them.
func BenchmarkPostReplicas(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			u := pgtest.Schema(b)
			var rs []*replica
			for range n {
				rs = append(rs, newReplica(b, u, false))
			}
			alice, _ := rs[0].agent(b, "alice"), rs[0].agent(b, "bob")
			ctx := context.Background()
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rs[int(next.Add(1))%n]
				for pb.Next() {
					if _, err := r.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "hello"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
		})
	}
}
