package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkStatements is the store's cost of the statements a fleet's
// agents make most: a wake's read (the agent by its token, then its inbox
// from the read cursor: three messages) and a heartbeat's write (its two
// columns, returning the unread counts), one at a time, with
// allocations and the process CPU per operation (the writer's goroutine
// included):
//
//	go test ./internal/store/sqlite -run '^$' -bench Statements -benchmem -count 5
func BenchmarkStatements(b *testing.B) {
	db := newDB(b)
	a := createAgent(b, db, "reader")
	createAgent(b, db, "sender")
	for i := range 3 {
		mustUpdate(b, db, func(tx hub.Tx) error {
			m := &hub.Message{From: "sender", To: []string{"reader"}, Body: fmt.Sprintf("message %d", i), Kind: hub.KindMessage, CreatedAt: t0}
			return tx.InsertMessage(m, []hub.Delivery{{AgentID: a.ID}})
		})
	}
	hash := hub.HashToken("token-reader")
	ctx := context.Background()
	b.Run("look", func(b *testing.B) {
		cpu0 := cpuTime(b)
		for b.Loop() {
			err := db.View(ctx, func(tx hub.Tx) error {
				ag, err := tx.AgentByTokenHash(hash)
				if err != nil {
					return err
				}
				lk, err := tx.LookInbox(ag.ID, 0, true, 10)
				if err == nil && len(lk.Messages) != 3 {
					err = fmt.Errorf("looked %d messages, want 3", len(lk.Messages))
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	b.Run("heartbeat", func(b *testing.B) {
		rctx := hub.RowLocked(ctx)
		n := 0
		cpu0 := cpuTime(b)
		for b.Loop() {
			n++
			err := db.Update(rctx, func(tx hub.Tx) error {
				unread, _, err := tx.StartHeartbeat(a.ID, fmt.Sprint(n), t0)
				if err == nil && unread != 3 {
					err = fmt.Errorf("%d unread, want 3", unread)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}
