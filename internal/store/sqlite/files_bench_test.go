package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkReadsBesideCommits is the store's file traffic as a fleet makes
// it: each op is one post committed by the writer and one wake read
// (Inbox and InboxCounts) on a pooled reader, from parallel goroutines,
// so that every read begins after other connections committed. Its system
// calls (SQLite's locks, page reads and writes) are counted from outside:
//
//	go test -c -o /tmp/sqlite.test ./internal/store/sqlite
//	perf stat -e 'syscalls:sys_enter_fcntl,syscalls:sys_enter_pread64,syscalls:sys_enter_pwrite64' \
//	    /tmp/sqlite.test -test.run '^$' -test.bench ReadsBesideCommits -test.benchtime 20000x
func BenchmarkReadsBesideCommits(b *testing.B) {
	db := newDB(b)
	const agents = 64
	ids := make([]int64, agents)
	for i := range agents {
		ids[i] = createAgent(b, db, fmt.Sprintf("agent-%d", i)).ID
	}
	ctx := hub.RowLocked(context.Background())
	var next atomic.Int64
	cpu0 := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			to := int(n % agents)
			err := db.Update(ctx, func(tx hub.Tx) error {
				m := &hub.Message{From: "x", To: []string{fmt.Sprintf("agent-%d", to)}, Body: fmt.Sprintf("post %d", n), Kind: hub.KindMessage, CreatedAt: t0}
				return tx.InsertMessage(m, []hub.Delivery{{AgentID: ids[to]}})
			})
			if err != nil {
				b.Error(err)
				return
			}
			err = db.View(ctx, func(tx hub.Tx) error {
				if _, err := tx.Inbox(ids[to], hub.InboxQuery{After: n - 50, Limit: 20}); err != nil {
					return err
				}
				_, _, _, err := tx.InboxCounts(ids[to], 0)
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
