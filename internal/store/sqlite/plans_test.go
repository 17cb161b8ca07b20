package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/mattn/go-sqlite3"
)

// A statement the connection's cache holds is not compiled again when it
// runs with other values: a LIMIT bound to a value, an equality on a bound
// value in a join. SQLite's authorizer is asked while a statement is
// compiled, so it counts the compilations.
func TestStatementsAreNotCompiledAgainPerRun(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, tempPath(t), Options{Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ann := createAgent(t, db, "ann")

	var compiles atomic.Int64
	conn, err := db.r.Conn(ctx) // the one read connection
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(func(op int, _, _, _ string) int {
			if op == sqlite3.SQLITE_SELECT {
				compiles.Add(1)
			}
			return sqlite3.SQLITE_OK
		})
		return nil
	})
	conn.Close() // back to the pool, for the reads below
	if err != nil {
		t.Fatal(err)
	}
	read := func(i int) {
		mustView(t, db, func(tx hub.Tx) error {
			if _, err := tx.ListEvents(hub.EventQuery{AfterID: int64(i), Limit: 10 + i}); err != nil {
				return err
			}
			_, _, _, err := tx.InboxCounts(ann.ID+int64(i%2), 0)
			return err
		})
	}
	read(1)
	first := compiles.Load()
	if first == 0 {
		t.Fatal("the authorizer saw no compilation of the first reads")
	}
	for i := 2; i <= 6; i++ {
		read(i)
	}
	if again := compiles.Load() - first; again != 0 {
		t.Errorf("5 more runs of the same reads with other values compiled %d SELECTs again, want 0 (the first run compiled %d)", again, first)
	}
}

// BenchmarkWakeRead is the store's share of a wake-up: the new messages
// after the agent's cursor and its unread counts, in one read, the cursor
// moving on each time (so that each run binds other values):
//
//	go test ./internal/store/sqlite -run '^$' -bench WakeRead -benchtime 20000x -count 3
func BenchmarkWakeRead(b *testing.B) {
	db := newDB(b)
	ann := createAgent(b, db, "ann")
	createAgent(b, db, "bob")
	const messages = 200
	for i := range messages {
		mustUpdate(b, db, func(tx hub.Tx) error {
			m := &hub.Message{From: "bob", To: []string{"ann"}, Body: fmt.Sprintf("message %d", i), Kind: hub.KindMessage, CreatedAt: t0}
			return tx.InsertMessage(m, []hub.Delivery{{AgentID: ann.ID}})
		})
	}
	ctx := context.Background()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		err := db.View(ctx, func(tx hub.Tx) error {
			after := int64(i % messages)
			if _, err := tx.Inbox(ann.ID, hub.InboxQuery{After: after, Limit: 1 + i%50, ReadUpTo: after}); err != nil {
				return err
			}
			_, _, _, err := tx.InboxCounts(ann.ID, ann.ReadUpTo)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/read")
}
