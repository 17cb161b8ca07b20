package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// wokenWithin fails t unless w is woken within 20 s.
func wokenWithin(t *testing.T, w *hub.Waiter, what string) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the wait was not woken", what)
	}
}

// notWoken fails t if a wake-up of w is pending.
func notWoken(t *testing.T, w *hub.Waiter, what string) {
	t.Helper()
	select {
	case <-w.C():
		t.Errorf("%s: the wait was woken", what)
	default:
	}
}

// A report of another process's post that names its recipients wakes
// exactly their waits, without reading the store: here the store holds no
// message at all, so a look would have woken nobody.
func TestDeliveredWakesExactlyItsRecipients(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.PollInterval = time.Hour })
	h.runWatcher(t)
	bob, _ := h.agent(t, "bob")
	carol, _ := h.agent(t, "carol")
	wb, err := h.Waiters().Register(bob.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	wc, err := h.Waiters().Register(carol.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()

	h.Delivered(1, 1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by the report")
	// Repeated and stale reports are hints too: they wake, never block.
	h.Delivered(1, 1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by a repeated report")
	h.Delivered(2, 3, nil)
	notWoken(t, wc, "carol, named by no report")
}

// A report that does not follow the messages the watcher has seen (one
// was lost, or arrived late) still wakes its recipients at once, and makes
// the watcher look, which wakes the recipients of the messages in between.
func TestDeliveredAfterAGapLooks(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.PollInterval = time.Hour })
	h.runWatcher(t)
	ctx := context.Background()
	bob, _ := h.agent(t, "bob")
	carol, _ := h.agent(t, "carol")
	other, err := sqlite.Open(ctx, h.Path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	wb, err := h.Waiters().Register(bob.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	wc, err := h.Waiters().Register(carol.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()

	// Another process posts to carol; its report is lost.
	m := &hub.Message{From: "elsewhere", To: []string{"carol"}, Body: "unreported", Kind: hub.KindMessage, CreatedAt: coreT0}
	if err := other.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessage(m, []hub.Delivery{{AgentID: carol.ID}}) }); err != nil {
		t.Fatal(err)
	}
	h.Delivered(m.ID+1, m.ID+1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by the report after the gap")
	wokenWithin(t, wc, "carol, whose message's report was lost")
}
