package sqlite

import (
	"slices"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// insertMessage stores a message from alice delivered to the given agents
// (mention true for those in mention) and returns its ID.
func insertMessage(tb testing.TB, db *DB, channel string, to []*hub.Agent, mention ...*hub.Agent) int64 {
	tb.Helper()
	m := &hub.Message{From: "alice", Channel: channel, Body: "hello", Kind: hub.KindMessage, CreatedAt: t0}
	var ds []hub.Delivery
	for _, a := range to {
		ds = append(ds, hub.Delivery{AgentID: a.ID, Mention: slices.Contains(mention, a)})
		m.To = append(m.To, a.Name)
	}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
	return m.ID
}

// Message IDs are cursors: they increase and are never reused, even after
// the newest messages are deleted and the store is reopened.
func TestMessageIDsNeverReused(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	db := openDB(t, path)
	bob := createAgent(t, db, "bob")
	var last int64
	for i := range 5 {
		id := insertMessage(t, db, "", []*hub.Agent{bob})
		if id <= last {
			t.Fatalf("message %d: ID %d after %d, want increasing", i, id, last)
		}
		last = id
	}
	deleteFrom := func(db *DB, minID int64) {
		t.Helper()
		mustUpdate(t, db, func(tx hub.Tx) error {
			_, err := tx.(*Tx).exec(`DELETE FROM messages WHERE id >= ?`, minID)
			return err
		})
	}
	deleteFrom(db, last-1) // the two newest
	if id := insertMessage(t, db, "", []*hub.Agent{bob}); id <= last {
		t.Errorf("after deleting the newest: new ID %d, want > %d", id, last)
	} else {
		last = id
	}
	deleteFrom(db, 0) // all
	if id := insertMessage(t, db, "", []*hub.Agent{bob}); id <= last {
		t.Errorf("after deleting all: new ID %d, want > %d", id, last)
	} else {
		last = id
	}
	deleteFrom(db, 0)
	db.Close()
	db = openDB(t, path)
	if id := insertMessage(t, db, "", []*hub.Agent{bob}); id <= last {
		t.Errorf("after reopen: new ID %d, want > %d", id, last)
	}
}

// Deleting a message deletes its deliveries (no dangling inbox rows).
func TestDeleteMessageCascades(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	bob := createAgent(t, db, "bob")
	id := insertMessage(t, db, "", []*hub.Agent{bob})
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`DELETE FROM messages WHERE id = ?`, id)
		return err
	})
	mustView(t, db, func(tx hub.Tx) error {
		unread, _, _, err := tx.InboxCounts(bob.ID, 0)
		if unread != 0 {
			t.Errorf("unread after delete = %d, want 0", unread)
		}
		return err
	})
}
