package hub_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// A write wakes the parked waits of the agents its messages reach only
// once it has committed: a write that rolls back after inserting a message
// to bob wakes none of bob's waits; a committed post to bob wakes his
// parked wait, which returns the message, and signals each of his waits
// once.
func TestWakeFromCommit(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	ann, _ := h.agent(t, "ann")
	bob, _ := h.agent(t, "bob")
	w := h.register(t, bob.ID)

	changedMind := errors.New("changed my mind")
	err := h.Core.Update(ctx, func(tx hub.Tx) error {
		m := &hub.Message{Project: hub.ProjectOr(""), From: ann.Name, SenderKind: hub.ByAgent, To: []string{bob.Name}, Body: "never sent", Kind: hub.KindMessage, CreatedAt: h.Clock.Now()}
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: bob.ID}}); err != nil {
			return err
		}
		return changedMind
	})
	if !errors.Is(err, changedMind) {
		t.Fatalf("the rolled-back write returned %v, want its own error", err)
	}
	select {
	case <-w.C():
		t.Fatal("a write that rolled back woke bob's wait")
	default:
	}

	got := make(chan *hub.WaitResult, 1)
	go func() {
		r, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(30)})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	waitFor(t, "bob's wait to park", func() bool { return h.Waiters.AgentCount(bob.ID) == 2 })
	m, err := h.Post(ctx, ann, "", hub.PostRequest{To: []string{bob.Name}, Body: "sent"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	default:
		t.Fatal("a committed post to bob did not wake his wait")
	}
	select {
	case <-w.C():
		t.Fatal("a committed post to bob woke his wait twice")
	default:
	}
	r := <-got // the fake clock stands still: only the wake-up ends the wait
	if r == nil || r.TimedOut || len(r.Messages) != 1 || r.Messages[0].ID != m.ID {
		t.Fatalf("bob's parked wait returned %+v, want the post %d alone", r, m.ID)
	}
}
