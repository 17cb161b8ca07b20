package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testDeleteMessagesBefore: the oldest messages before the time go, at most
// limit per call, with their deliveries; later ones and the ID counter stay.
func testDeleteMessagesBefore(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob := createAgent(t, db, "bob")
	var old []int64
	for range 5 {
		old = append(old, insertMessage(t, db, "", []*hub.Agent{bob}))
	}
	late := &hub.Message{From: "alice", Body: "late", Kind: hub.KindMessage, CreatedAt: t0.Add(time.Hour), To: []string{"bob"}}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(late, []hub.Delivery{{AgentID: bob.ID}}) })
	del := func(limit int) int64 {
		var n int64
		mustUpdate(t, db, func(tx hub.Tx) error {
			var err error
			n, err = tx.DeleteMessagesBefore(t0.Add(time.Minute), limit)
			return err
		})
		return n
	}
	if n := del(3); n != 3 {
		t.Fatalf("first batch deleted %d, want 3", n)
	}
	if n := del(3); n != 2 {
		t.Fatalf("second batch deleted %d, want 2", n)
	}
	if n := del(3); n != 0 {
		t.Fatalf("third batch deleted %d, want 0", n)
	}
	mustView(t, db, func(tx hub.Tx) error {
		ms, err := tx.Inbox(bob.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		if got := ids(ms); !slices.Equal(got, []int64{late.ID}) {
			t.Errorf("bob's inbox after deleting = %v, want only %d (deleted %v)", got, late.ID, old)
		}
		newest, err := tx.MaxMessageID()
		if newest != late.ID {
			t.Errorf("newest ID = %d, want %d", newest, late.ID)
		}
		return err
	})
}
