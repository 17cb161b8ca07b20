package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A write records the agents each message it inserts is delivered to
// (hub.ChangesTx), whichever insert it uses and whether or not it is
// marked hub.RowLocked (PostgreSQL writes those posts at the end of the
// batch), so that the hub wakes their parked waits at the commit; a
// message delivered to no agent records no one.
func testWritesRecordDeliveries(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a, b, c := createAgent(t, db, "ann"), createAgent(t, db, "bob"), createAgent(t, db, "cat")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(to ...string) *hub.Message {
		return &hub.Message{From: "ann", To: to, Body: "hello", Kind: hub.KindMessage, CreatedAt: now}
	}
	for _, ctx := range []context.Context{context.Background(), hub.RowLocked(context.Background())} {
		var got hub.Changes
		if err := db.Update(ctx, func(tx hub.Tx) error {
			got = hub.Changes{}
			tx.Record(&got)
			defer tx.Record(nil)
			if err := tx.InsertMessage(msg("bob"), []hub.Delivery{{AgentID: b.ID}}); err != nil {
				return err
			}
			if err := tx.InsertMessage(msg(), nil); err != nil {
				return err
			}
			return tx.InsertMessages([]*hub.Message{msg("cat"), msg("ann", "bob")},
				[][]hub.Delivery{{{AgentID: c.ID}}, {{AgentID: a.ID}, {AgentID: b.ID, Mention: true}}})
		}); err != nil {
			t.Fatal(err)
		}
		ids := slices.Clone(got.Agents())
		slices.Sort(ids)
		if want := []int64{a.ID, b.ID, b.ID, c.ID}; !slices.Equal(ids, want) {
			t.Errorf("row-locked %v: recorded agents %v, want %v (ann, bob twice, cat)", hub.IsRowLocked(ctx), ids, want)
		}
	}
}
