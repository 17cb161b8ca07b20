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

// register registers a wait of agentID, closed when the test ends.
func (h *testHub) register(t *testing.T, agentID int64) *hub.Waiter {
	t.Helper()
	w, err := h.Waiters.Register(agentID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// watchedHub returns a hub whose watcher runs but polls only every hour,
// agents bob and carol, and a second handle on its store that posts as
// another process would.
func watchedHub(t *testing.T) (h *testHub, bob, carol *hub.Agent, other *sqlite.DB) {
	t.Helper()
	h = newTestHub(t, func(c *hub.Config) { c.PollInterval = time.Hour })
	h.runWatcher(t)
	bob, _ = h.agent(t, "bob")
	carol, _ = h.agent(t, "carol")
	other, err := sqlite.Open(context.Background(), h.Path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return h, bob, carol, other
}

// postElsewhere posts to agent through other, as another process.
func postElsewhere(t *testing.T, other *sqlite.DB, agent *hub.Agent) *hub.Message {
	t.Helper()
	m := &hub.Message{From: "elsewhere", To: []string{agent.Name}, Body: "x", Kind: hub.KindMessage, CreatedAt: coreT0}
	if err := other.Update(context.Background(), func(tx hub.Tx) error { return tx.InsertMessage(m, []hub.Delivery{{AgentID: agent.ID}}) }); err != nil {
		t.Fatal(err)
	}
	return m
}

// With no poll interval to speak of, only a Poke (a store's report that
// another process posted) makes the watcher wake the recipients of a
// message written by another process; RecheckWaits (after such reports
// were interrupted) wakes every parked wait.
func TestWatcherPokeAndRecheck(t *testing.T) {
	t.Parallel()
	h, bob, carol, other := watchedHub(t)
	wb := h.register(t, bob.ID)
	postElsewhere(t, other, bob)
	h.Poke()
	wokenWithin(t, wb, "Poke after another process's post")

	wc := h.register(t, carol.ID)
	if n := h.RecheckWaits(); n != 2 {
		t.Errorf("RecheckWaits woke the waits of %d agents, want 2", n)
	}
	wokenWithin(t, wb, "RecheckWaits, bob")
	wokenWithin(t, wc, "RecheckWaits, carol")
}

// A report of another process's post that names its recipients wakes
// exactly their waits, without reading the store: here the store holds no
// message at all, so a look would have woken nobody.
func TestPostedToWakesExactlyItsRecipients(t *testing.T) {
	t.Parallel()
	h, bob, carol, _ := watchedHub(t)
	wb, wc := h.register(t, bob.ID), h.register(t, carol.ID)

	h.PostedTo(1, 1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by the report")
	// Repeated and stale reports are hints too: they wake, never block.
	h.PostedTo(1, 1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by a repeated report")
	h.PostedTo(2, 3, nil)
	notWoken(t, wc, "carol, named by no report")
}

// A report that does not follow the messages the watcher has seen (one
// was lost, or arrived late) still wakes its recipients at once, and makes
// the watcher look, which wakes the recipients of the messages in between.
func TestPostedToAfterAGapLooks(t *testing.T) {
	t.Parallel()
	h, bob, carol, other := watchedHub(t)
	wb, wc := h.register(t, bob.ID), h.register(t, carol.ID)

	m := postElsewhere(t, other, carol) // its report is lost
	h.PostedTo(m.ID+1, m.ID+1, []int64{bob.ID})
	wokenWithin(t, wb, "bob, named by the report after the gap")
	wokenWithin(t, wc, "carol, whose message's report was lost")
}
