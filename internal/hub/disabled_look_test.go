package hub_test

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// disableUnheard delivers a message to a and then disables a in h's store
// itself, past the hub: what a wait or a stream sees between the commit
// that disables an agent and that commit's wake-up, which ends the agent's
// parked calls (core.wake, Waiters.Revoke) — on another replica sharing a
// PostgreSQL database, until its report comes. It returns the message.
func disableUnheard(t *testing.T, h *testHub, from string, a *hub.Agent) *hub.Message {
	t.Helper()
	m := &hub.Message{From: from, To: []string{a.Name}, Body: "for a disabled agent", Kind: hub.KindMessage, CreatedAt: h.Clock.Now()}
	err := h.DB.Update(context.Background(), func(tx hub.Tx) error {
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: a.ID}}); err != nil {
			return err
		}
		row, err := tx.AgentByID(a.ID)
		if err != nil {
			return err
		}
		row.DisabledAt = h.Clock.Now()
		return tx.UpdateAgent(row)
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A disabled agent gets nothing: a stream's look after the agent's
// disabling has committed, before the wake-up that ends its stream came,
// hands out none of its messages, and the stream ends as disabled.
func TestStreamOfDisabledAgentGetsNothing(t *testing.T) {
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob")
	bob := ags[1]
	st, err := h.Subscribe(context.Background(), bob, hub.SubscribeRequest{Via: "channel"})
	if err != nil {
		t.Fatal(err)
	}
	rd := serveStream(t, st)
	rd.take(t, nil) // the first frame
	disableUnheard(t, h, "alice", bob)
	h.Waiters.Notify(bob.ID) // a wake-up of the stream, as another message's would be
	select {
	case f := <-rd.frames:
		rd.sends <- nil
		t.Fatalf("the stream of a disabled agent sent a frame: %+v", f)
	case err := <-rd.ended:
		wantCode(t, "the stream's end", err, hub.EPERMISSION)
	}
}

// A disabled agent gets nothing: a parked wait's look after the agent's
// disabling has committed, before the wake-up that ends the wait came,
// answers EPERMISSION with none of the agent's messages.
func TestWaitOfDisabledAgentGetsNothing(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ags := h.agents(t, "alice", "bob", "carol")
	for i, req := range []hub.WaitRequest{
		{TimeoutSeconds: longWait},                                  // from its read cursor
		{TimeoutSeconds: longWait, AfterID: hub.FormatMessageID(0)}, // after a cursor of its own
	} {
		a := ags[1+i]
		c := h.parkedWait(t, context.Background(), a, req)
		disableUnheard(t, h, "alice", a)
		h.Waiters.Notify(a.ID) // a wake-up of the wait, as another message's would be
		r := result(t, c)
		if r.res != nil {
			t.Fatalf("%s's wait %+v, the agent disabled, answered %+v", a.Name, req, r.res)
		}
		wantCode(t, a.Name+"'s wait", r.err, hub.EPERMISSION)
	}
}
