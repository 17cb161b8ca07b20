package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// An agent's waits and a person's change streams take their places by the
// same rule: each principal up to its own limit, everyone up to the hub's,
// a share of the streams kept for the admin; a place closed is free again.
func TestParkLimitsOneRuleForEveryPrincipal(t *testing.T) {
	t.Parallel()
	ws := hub.NewWaiters(hub.WaitLimits{PerAgent: 2, Total: 3, StreamsPerPerson: 2, Streams: 5, StreamsKeptForAdmin: 1}, hub.NewFakeClock(coreT0))
	feed := ws.Feed()
	wait := func(agentID int64) (*hub.Waiter, error) { return ws.Register(agentID, ws.Epoch(), nil) }
	stream := func(who hub.Principal) (*hub.Subscription, error) { return feed.Subscribe(who, feed.Epoch()) }
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused := func(what string, err error, says string) {
		t.Helper()
		wantCode(t, what, err, hub.EEXHAUSTED)
		if err != nil && !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %q, want it to say %q", what, err, says)
		}
	}

	w1, err := wait(7)
	must("agent 7's first wait", err)
	_, err = wait(7)
	must("agent 7's second wait", err)
	_, err = wait(7)
	refused("agent 7's third wait", err, "per-agent limit")
	pat := hub.PersonPrincipal("pat")
	s1, err := stream(pat)
	must("pat's first stream", err)
	_, err = stream(pat)
	must("pat's second stream", err)
	_, err = stream(pat)
	refused("pat's third stream", err, "limit per person")

	// Closing one frees its place, for waits and streams alike.
	w1.Close()
	s1.Close()
	_, err = wait(7)
	must("agent 7's wait after one closed", err)
	_, err = stream(pat)
	must("pat's stream after one closed", err)

	// The hub's totals: 3 waits; 5 streams of which people get 4.
	_, err = wait(8)
	must("agent 8's wait", err)
	_, err = wait(9)
	refused("a wait past the hub's total", err, "the hub already holds 3 parked waits")
	_, err = stream(hub.PersonPrincipal("ann"))
	must("ann's stream", err)
	_, err = stream(hub.PersonPrincipal("ann"))
	must("ann's second stream", err)
	_, err = stream(hub.PersonPrincipal("bo"))
	refused("a person past people's share", err, "kept for the admin")
	_, err = stream(hub.Principal{})
	must("the admin's stream with people's share full", err)
	_, err = stream(hub.Principal{})
	refused("the admin past the hub's total", err, "the hub already streams changes to 5 pages")
	if got := feed.Count(); got != 5 {
		t.Errorf("streams = %d, want 5", got)
	}
	if got := ws.Count(); got != 3 {
		t.Errorf("waits = %d, want 3", got)
	}
}

// Revoking an agent ends every kind of call it holds parked (a wait,
// next_task, an approval, its stream of wake-ups), each with its error, and
// nobody else's; revoking a person ends that person's change streams and
// refuses a stream checked before the revocation; the hub's stop ends the
// rest.
func TestRevokeEndsEveryKindOfPark(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, _ := h.agent(t, "alice")
	_, tok := h.agent(t, "bob")
	bob := h.auth(t, tok)
	people := hub.NewPeople(h.Core)
	if _, _, err := people.CreatePerson(ctx, "pat", nil); err != nil {
		t.Fatal(err)
	}

	timers := h.Clock.Timers()
	approval := make(chan error, 1)
	go func() {
		r, err := h.Inbox.RequestApproval(ctx, bob, hub.ApprovalRequest{Tool: "Bash", Wait: 20 * time.Second})
		if err == nil && r.Item.Open() {
			err = hub.Errorf(hub.EINTERNAL, "the approval returned still open")
		}
		approval <- err
	}()
	waitFor(t, "bob's approval parked", func() bool { return h.Clock.Timers() > timers })
	wait := h.parkedWait(t, ctx, bob, hub.WaitRequest{TimeoutSeconds: longWait})
	next := make(chan error, 1)
	go func() {
		_, err := h.Tasks.Next(ctx, bob, hub.NextRequest{Wait: 30 * time.Second})
		next <- err
	}()
	waitFor(t, "bob's next_task parked", func() bool { return h.Waiters.AgentCount(bob.ID) == 2 })
	st, err := h.Subscribe(ctx, bob, hub.SubscribeRequest{Via: "channel"})
	if err != nil {
		t.Fatal(err)
	}
	rd := serveStream(t, st)
	rd.take(t, nil) // its first frame
	alices := h.parkedWait(t, ctx, alice, hub.WaitRequest{TimeoutSeconds: longWait})
	feed := h.Feed()
	patStream, err := feed.Subscribe(hub.PersonPrincipal("pat"), feed.Epoch())
	if err != nil {
		t.Fatal(err)
	}
	adminStream, err := feed.Subscribe(hub.Principal{}, feed.Epoch())
	if err != nil {
		t.Fatal(err)
	}

	if _, _, err := h.RotateToken(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "bob's parked wait", result(t, wait).err, hub.EUNAUTHORIZED)
	wantCode(t, "bob's parked next_task", <-next, hub.EUNAUTHORIZED)
	if err := <-approval; err != nil {
		t.Errorf("bob's parked approval: %v, want it ended unanswered", err)
	}
	wantCode(t, "bob's stream of wake-ups", <-rd.ended, hub.EUNAUTHORIZED)
	for what, s := range map[string]*hub.Subscription{"pat's stream": patStream, "the admin's stream": adminStream} {
		select {
		case <-s.Done():
			t.Errorf("%s ended with bob's revocation", what)
		default:
		}
	}
	if n := h.Waiters.AgentCount(alice.ID); n != 1 {
		t.Errorf("alice's parked waits after bob's revocation = %d, want 1", n)
	}

	epoch := feed.Epoch() // a stream whose token was checked before the revocation
	if err := people.RevokePerson(ctx, "pat"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-patStream.Done():
	default:
		t.Error("pat's stream still open after pat's revocation")
	}
	_, err = feed.Subscribe(hub.PersonPrincipal("pat"), epoch)
	wantCode(t, "a stream of pat checked before the revocation", err, hub.EUNAUTHORIZED)
	select {
	case <-adminStream.Done():
		t.Error("the admin's stream ended with pat's revocation")
	default:
	}

	h.Shutdown()
	<-adminStream.Done()
	if r := result(t, alices); r.err != nil || !r.res.TimedOut {
		t.Errorf("alice's wait at the hub's stop = %+v, %v; want a timed-out reply", r.res, r.err)
	}
	if got := feed.Count(); got != 0 {
		t.Errorf("streams after the stop = %d, want 0", got)
	}
}
