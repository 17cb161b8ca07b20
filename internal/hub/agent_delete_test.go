package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// sendMany writes n messages from sender to to in one transaction, as
// the hub writes a batch, every other one mentioning to.
func (h *testHub) sendMany(tb testing.TB, sender string, to *hub.Agent, n int) {
	tb.Helper()
	err := h.DB.Update(context.Background(), func(tx hub.Tx) error {
		ms := make([]*hub.Message, n)
		ds := make([][]hub.Delivery, n)
		for i := range ms {
			ms[i] = &hub.Message{From: sender, To: []string{to.Name}, Body: "from " + sender, Kind: hub.KindMessage, CreatedAt: coreT0, Mentions: []string{to.Name}}
			ds[i] = []hub.Delivery{{AgentID: to.ID, Mention: i%2 == 0}}
		}
		return tx.InsertMessages(ms, ds)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// A deletion is refused for a bad name, an unknown agent and an enabled
// one (naming the command that disables it), and then changes nothing.
func TestDeleteAgentRefusals(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "bob")
	sent := h.post(t, as[1], hub.PostRequest{To: []string{"alice"}, Body: "still here"})
	ctx := context.Background()
	for _, tt := range []struct {
		name, agent, code, says string
	}{
		{"bad name", "Bob!", hub.EINVALID, "invalid"},
		{"unknown", "nobody", hub.ENOTFOUND, "nobody"},
		{"enabled", "bob", hub.EPRECONDITION, "hubctl agent disable bob"},
	} {
		_, err := h.DeleteAgent(ctx, tt.agent)
		wantCode(t, tt.name, err, tt.code)
		if err != nil && !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %q does not say %q", tt.name, err, tt.says)
		}
	}
	if _, err := h.Agent(ctx, "bob"); err != nil {
		t.Errorf("bob after the refusals: %v", err)
	}
	if ms := h.inbox(t, as[0]); len(ms) != 1 || ms[0].ID != sent.ID {
		t.Errorf("alice's inbox after the refusals = %d messages, want bob's one", len(ms))
	}
}

// Deleting a disabled agent with more messages than a batch removes it,
// its messages and its data; the others' messages to it stay, their
// unread counts equal a full count, a hub-wide agent_deleted event names
// it, its token is refused, and its name registers a new, empty agent.
func TestDeleteAgent(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]
	_, bobToken, err := h.RotateToken(ctx, "bob", false)
	if err != nil {
		t.Fatal(err)
	}
	bob = h.auth(t, bobToken)
	if _, err := h.JoinChannel(ctx, alice, "#ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.JoinChannel(ctx, bob, "#ops"); err != nil {
		t.Fatal(err)
	}
	kept := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol"}, Body: "to bob and carol"})
	// More than a batch of bob's messages, bulk-written as the hub writes them.
	n := hub.AgentDeleteBatch*2 + 7
	h.sendMany(t, "bob", alice, n)
	h.post(t, bob, hub.PostRequest{Channel: "#ops", Body: "bob in ops"})
	if _, err := h.CreateActivityLog(ctx, bob, hub.ActivityLog{Type: hub.ActivityReflection, Title: "looked back", HeartbeatID: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetAgentDisabled(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(time.Minute)

	d, err := h.DeleteAgent(ctx, "bob")
	if err != nil {
		t.Fatalf("DeleteAgent: %v", err)
	}
	if d.MessagesDeleted != int64(n)+1 || d.Agent.Name != "bob" {
		t.Errorf("deleted %s with %d messages, want bob with %d", d.Agent.Name, d.MessagesDeleted, n+1)
	}
	if _, err := h.Agent(ctx, "bob"); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("bob after the deletion: %v, want ENOTFOUND", err)
	}
	// bob's calls were recorded in memory and never flushed: they are
	// dropped, not written to a row that is gone.
	if _, err := h.FlushPresence(ctx, h.Clock.Now(), hub.DefaultScheduleSettings()); err != nil {
		t.Errorf("FlushPresence after the deletion: %v", err)
	}
	if _, err := h.Authenticate(ctx, bobToken); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
		t.Errorf("bob's token after the deletion: %v, want EUNAUTHORIZED", err)
	}
	if ms := h.inbox(t, alice); len(ms) != 0 {
		t.Errorf("alice's inbox still has %d of bob's messages", len(ms))
	}
	st, err := h.Status(ctx, alice)
	if err != nil || st.Unread != 0 || st.Mentions != 0 || st.LatestMessageID != 0 {
		t.Errorf("alice's status = %+v, %v; want no unread, no mention, no latest", st, err)
	}
	if ms := h.inbox(t, carol); len(ms) != 1 || ms[0].ID != kept.ID {
		t.Errorf("carol's inbox = %d messages, want alice's to bob and carol", len(ms))
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Kind: string(hub.EventAgentDeleted)})
	if err != nil || len(evs) != 1 || evs[0].AgentID != 0 || !strings.Contains(evs[0].Detail, `"bob"`) {
		t.Fatalf("agent_deleted events = %+v, %v; want one hub-wide event naming bob", evs, err)
	}
	if !evs[0].CreatedAt.Equal(coreT0.Add(time.Minute)) {
		t.Errorf("the event is at %s, want the clock's %s", evs[0].CreatedAt, coreT0.Add(time.Minute))
	}

	if _, err := h.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "anyone?"}); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("a post to the deleted bob: %v, want ENOTFOUND", err)
	}
	again, _ := h.agent(t, "bob")
	if ms := h.inbox(t, again); len(ms) != 0 {
		t.Errorf("the new bob's inbox = %d messages, want none", len(ms))
	}
	welcome := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "welcome"})
	if ms := h.inbox(t, again); len(ms) != 1 || ms[0].ID != welcome.ID {
		t.Errorf("the new bob's inbox after a post to bob = %d messages, want the new one", len(ms))
	}
	logs, cps, err := h.ListActivity(ctx, "bob", 10)
	if err != nil || len(logs)+len(cps) != 0 {
		t.Errorf("the new bob's activity = %d logs, %d checkpoints, %v; want none", len(logs), len(cps), err)
	}
}

// Another process's deletion (AgentChanged, as the PostgreSQL listener
// reports it) ends the agent's parked waits at once with EUNAUTHORIZED.
func TestAgentDeletedElsewhereEndsWaits(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	_, tok := h.agent(t, "bob")
	bob := h.auth(t, tok)
	c := h.parkedWait(t, context.Background(), bob, hub.WaitRequest{TimeoutSeconds: longWait})
	h.AgentChanged(bob.ID, hub.AgentDeleted)
	wantCode(t, "parked wait after the deletion", result(t, c).err, hub.EUNAUTHORIZED)
	if n := h.Waiters.Count(); n != 0 {
		t.Errorf("parked waits = %d, want 0", n)
	}
}

// cancelAfter is a store whose context is cancelled once n write
// transactions have committed: a deletion stopped between two batches.
type cancelAfter struct {
	hub.Store
	n      int
	cancel context.CancelFunc
}

func (s *cancelAfter) Update(ctx context.Context, fn func(hub.Tx) error) error {
	err := s.Store.Update(ctx, fn)
	if s.n--; s.n == 0 {
		s.cancel()
	}
	return err
}

// A deletion stopped half way leaves the agent, disabled, with what the
// committed batches did not reach, and no event; running it again
// finishes it.
func TestDeleteAgentResumes(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	n := hub.AgentDeleteBatch*2 + 1
	h.sendMany(t, "bob", as[0], n)
	if _, err := h.SetAgentDisabled(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	stopped, cancel := context.WithCancel(ctx)
	defer cancel()
	svc := hub.NewAgents(hub.NewCore(&cancelAfter{Store: h.DB, n: 1, cancel: cancel}, h.Clock, hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, h.Clock)))
	d, err := svc.DeleteAgent(stopped, "bob")
	if err == nil || d.MessagesDeleted != hub.AgentDeleteBatch {
		t.Fatalf("stopped after one batch: %+v, %v; want %d messages deleted and an error", d, err, hub.AgentDeleteBatch)
	}
	if a, err := h.Agent(ctx, "bob"); err != nil || !a.Disabled() {
		t.Fatalf("bob after the stopped deletion = %v, %v; want him there, disabled", a, err)
	}
	if st, err := h.Status(ctx, as[0]); err != nil || st.Unread != int64(n-hub.AgentDeleteBatch) {
		t.Errorf("alice's unread after the stopped deletion = %+v, %v; want %d", st, err, n-hub.AgentDeleteBatch)
	}
	d, err = h.DeleteAgent(ctx, "bob")
	if err != nil || d.MessagesDeleted != int64(n-hub.AgentDeleteBatch) {
		t.Fatalf("the deletion run again = %+v, %v; want the other %d messages", d, err, n-hub.AgentDeleteBatch)
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Kind: string(hub.EventAgentDeleted)})
	if err != nil || len(evs) != 1 {
		t.Errorf("agent_deleted events = %d, %v; want one", len(evs), err)
	}
	if st, err := h.Status(ctx, as[0]); err != nil || st.Unread != 0 {
		t.Errorf("alice's unread after the deletion = %+v, %v; want 0", st, err)
	}
}

// An agent deleted by another process whose notice this one missed fails
// one presence flush; the next one forgets it and writes the others'.
func TestFlushPresenceForgetsAgentsDeletedElsewhere(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	// Both calls are recorded in memory, not flushed; then another process
	// deletes bob.
	bob := h.agents(t, "alice", "bob")[1]
	err := h.DB.Update(ctx, func(tx hub.Tx) error {
		_, err := tx.DeleteAgent(bob, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(time.Minute)
	set := hub.DefaultScheduleSettings()
	if _, err := h.FlushPresence(ctx, h.Clock.Now(), set); hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Fatalf("the first flush: %v, want it to fail on the missing agent", err)
	}
	if n, err := h.FlushPresence(ctx, h.Clock.Now(), set); err != nil || n != 1 {
		t.Fatalf("the next flush = %d, %v; want alice's one", n, err)
	}
	a, err := h.Agent(ctx, "alice")
	if err != nil || a.LastSeenAt.IsZero() {
		t.Errorf("alice after the flush = %+v, %v; want her call stored", a, err)
	}
}
