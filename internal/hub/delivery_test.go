package hub_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// receiptOf returns agent's receipt of message id, as the admin sees it.
func (h *testHub) receiptOf(tb testing.TB, id int64, agent string) hub.Receipt {
	tb.Helper()
	_, rs, err := h.services.Receipts.Get(context.Background(), nil, strconv.FormatInt(id, 10))
	if err != nil {
		tb.Fatalf("receipts of %d: %v", id, err)
	}
	for _, r := range rs {
		if r.Agent == agent {
			return r
		}
	}
	tb.Fatalf("message %d has no receipt for %s", id, agent)
	return hub.Receipt{}
}

// wantState fails the test unless agent's receipt of id is in state with
// the path via (0: none).
func (h *testHub) wantState(tb testing.TB, id int64, agent string, state hub.ReceiptState, via hub.Via) hub.Receipt {
	tb.Helper()
	r := h.receiptOf(tb, id, agent)
	if r.State() != state || r.Via != via || (via != 0) == r.InContextAt.IsZero() {
		tb.Errorf("%s's receipt of %d: state %s via %q at %v; want %s via %q", agent, id, r.State(), r.Via, r.InContextAt, state, via)
	}
	return r
}

// pathWait is a peek of agent's path via (channel or tmux) after cursor.
func (h *testHub) pathWait(tb testing.TB, a *hub.Agent, via string, after int64) *hub.WaitResult {
	tb.Helper()
	r, err := h.Wait(context.Background(), a, hub.WaitRequest{TimeoutSeconds: seconds(0), Via: via, AfterID: hub.FormatMessageID(after)})
	if err != nil {
		tb.Fatalf("%s's %s wait: %v", a.Name, via, err)
	}
	return r
}

// confirm confirms ids for a through via and fails the test on error.
func (h *testHub) confirm(tb testing.TB, a *hub.Agent, via string, ids ...int64) {
	tb.Helper()
	var s []string
	for _, id := range ids {
		s = append(s, strconv.FormatInt(id, 10))
	}
	if err := h.Confirm(context.Background(), a, s, via); err != nil {
		tb.Fatalf("Confirm(%s, %v, %s): %v", a.Name, ids, via, err)
	}
}

// TestInContextThroughWaitAndRead: the agent's own wait and read put what
// they return in its context, once, with the path and time; the states
// then follow the read cursor and the acknowledgement.
func TestInContextThroughWaitAndRead(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob := as[0], as[1]
	m1 := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol"}, Body: "one", AckRequired: true})
	h.wantState(t, m1.ID, "bob", hub.StateQueued, 0)

	waited := h.Clock.Now()
	if r, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0)}); err != nil || len(r.Messages) != 1 {
		t.Fatalf("bob's wait = %v, %v; want message %d", r, err, m1.ID)
	}
	if r := h.wantState(t, m1.ID, "bob", hub.StateInContext, hub.ViaWait); !r.InContextAt.Equal(waited) || !r.DeliveredAt.Equal(waited) {
		t.Errorf("bob's receipt: in context %v, delivered %v; want both %v", r.InContextAt, r.DeliveredAt, waited)
	}
	h.wantState(t, m1.ID, "carol", hub.StateQueued, 0)

	h.Clock.Advance(time.Minute)
	m2 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "two"})
	if ms := h.inbox(t, bob); len(ms) != 2 { // a read returns m1 again: it keeps its path
		t.Fatalf("bob's inbox = %v", msgIDs(ms))
	}
	h.wantState(t, m1.ID, "bob", hub.StateInContext, hub.ViaWait)
	if r := h.wantState(t, m2.ID, "bob", hub.StateInContext, hub.ViaRead); !r.InContextAt.Equal(h.Clock.Now()) {
		t.Errorf("m2 in bob's context at %v, want %v", r.InContextAt, h.Clock.Now())
	}

	if _, _, err := h.MarkRead(ctx, bob, hub.FormatMessageID(m1.ID)); err != nil {
		t.Fatal(err)
	}
	h.wantState(t, m1.ID, "bob", hub.StateRead, hub.ViaWait)
	if _, err := h.Acknowledge(ctx, bob, []string{hub.FormatMessageID(m1.ID)}); err != nil {
		t.Fatal(err)
	}
	h.wantState(t, m1.ID, "bob", hub.StateAcknowledged, hub.ViaWait)
	h.wantState(t, m2.ID, "bob", hub.StateInContext, hub.ViaRead)
}

// TestPathWaitsAwaitConfirmation: what a path's wait hands out is
// delivered, not in context, until the path confirms it; the first path
// that confirms stays; a confirmation of what the caller did not receive,
// or through a path the hub records itself, is refused and records
// nothing.
func TestPathWaitsAwaitConfirmation(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]
	m1 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "one"})
	m2 := h.post(t, alice, hub.PostRequest{To: []string{"carol"}, Body: "not bob's"})

	if r := h.pathWait(t, bob, "channel", 0); len(r.Messages) != 1 || r.Messages[0].ID != m1.ID || r.Cursor != m1.ID {
		t.Fatalf("bob's channel wait = %v (cursor %d), want message %d", msgIDs(r.Messages), r.Cursor, m1.ID)
	}
	if r := h.wantState(t, m1.ID, "bob", hub.StateQueued, 0); r.DeliveredAt.IsZero() {
		t.Error("handed to bob's channel path, m1 is not delivered")
	}

	for _, tt := range []struct {
		ids  []string
		via  string
		code string
		says string
	}{
		{[]string{hub.FormatMessageID(m1.ID)}, "wait", hub.EINVALID, "hook, channel, tmux"},
		{[]string{hub.FormatMessageID(m1.ID)}, "", hub.EINVALID, "hook, channel or tmux"},
		{nil, "hook", hub.EINVALID, "ids is empty"},
		{[]string{"x"}, "hook", hub.EINVALID, "not a message ID"},
		{[]string{hub.FormatMessageID(m1.ID), hub.FormatMessageID(m2.ID)}, "hook", hub.ENOTFOUND, "not among the messages delivered to you"},
	} {
		err := h.Confirm(ctx, bob, tt.ids, tt.via)
		if hub.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Confirm(%v, %q) = %v; want %s saying %q", tt.ids, tt.via, err, tt.code, tt.says)
		}
	}
	h.wantState(t, m1.ID, "bob", hub.StateQueued, 0) // the refused calls recorded nothing

	h.Clock.Advance(time.Second)
	h.confirm(t, bob, "channel", m1.ID)
	at := h.Clock.Now()
	h.Clock.Advance(time.Second)
	h.confirm(t, bob, "hook", m1.ID) // a second path: the first stays
	if r := h.wantState(t, m1.ID, "bob", hub.StateInContext, hub.ViaChannel); !r.InContextAt.Equal(at) {
		t.Errorf("in context at %v, want the channel's %v", r.InContextAt, at)
	}
	h.confirm(t, carol, "tmux", m2.ID)
	h.wantState(t, m2.ID, "carol", hub.StateInContext, hub.ViaTmux)
	if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0), Via: "hook"}); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("a wait via hook = %v, want EINVALID (hooks take injections)", err)
	}
}

// TestOneMessageOneDeliveryAcrossPaths: a message, or a nudge, reaching an
// agent with a channel push, hooks and a tmux sidecar is carried by one
// path: the others pass it over while it is on its way and once it is in
// context, and it is recorded in context once. The sidecar, slow to paste,
// holds up no other path. A path that was handed a message and let its
// claim lapse without confirming leaves it queued.
func TestOneMessageOneDeliveryAcrossPaths(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	inject := func() []int64 {
		t.Helper()
		inj, err := h.TakeInjection(ctx, bob, 0)
		if err != nil {
			t.Fatal(err)
		}
		return msgIDs(inj.Messages)
	}
	var channel, tmux int64 // the paths' cursors

	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "the build is green"})
	r := h.pathWait(t, bob, "channel", channel)
	channel = r.Cursor
	if got := msgIDs(r.Messages); !slices.Equal(got, []int64{m.ID}) {
		t.Fatalf("channel carries %v, want %d", got, m.ID)
	}
	// On its way through the channel: the hook and the sidecar pass it over.
	if got := inject(); len(got) != 0 {
		t.Errorf("the hook injects %v while the channel carries it", got)
	}
	r = h.pathWait(t, bob, "tmux", tmux)
	if tmux = r.Cursor; len(r.Messages) != 0 || r.TimedOut || tmux != m.ID {
		t.Errorf("the sidecar gets %v (timed out %v, cursor %d) while the channel carries it; want none, its cursor past it", msgIDs(r.Messages), r.TimedOut, tmux)
	}
	h.confirm(t, bob, "channel", m.ID)
	h.wantState(t, m.ID, "bob", hub.StateInContext, hub.ViaChannel)

	// A nudge (a reminder): the hook takes it first; the others pass it over.
	n, err := h.Nudge(ctx, "bob", "are you stuck?")
	if err != nil {
		t.Fatal(err)
	}
	if got := inject(); !slices.Equal(got, []int64{n.ID}) {
		t.Fatalf("the hook injects %v, want the nudge %d", got, n.ID)
	}
	h.confirm(t, bob, "hook", n.ID)
	h.Clock.Advance(time.Minute) // past every claim: only the record counts now
	for _, via := range []string{"channel", "tmux"} {
		cursor := map[string]int64{"channel": channel, "tmux": tmux}[via]
		if r := h.pathWait(t, bob, via, cursor); len(r.Messages) != 0 {
			t.Errorf("%s carries %v after the hook put the nudge in context", via, msgIDs(r.Messages))
		}
	}
	h.wantState(t, n.ID, "bob", hub.StateInContext, hub.ViaHook)
	var nudges int
	for _, m := range h.inbox(t, bob) {
		if m.Kind == hub.KindNudge {
			nudges++
		}
	}
	if nudges != 1 {
		t.Errorf("bob has %d nudges, want 1", nudges)
	}

	// Handed to the sidecar first: the channel carries it all the same,
	// and the sidecar, looking again before it pastes, passes it over.
	slow := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "for the fastest path"})
	if r := h.pathWait(t, bob, "tmux", tmux); !slices.Equal(msgIDs(r.Messages), []int64{slow.ID}) {
		t.Fatalf("tmux gets %v, want %d", msgIDs(r.Messages), slow.ID)
	}
	r = h.pathWait(t, bob, "channel", channel)
	if channel = r.Cursor; !slices.Equal(msgIDs(r.Messages), []int64{slow.ID}) {
		t.Fatalf("the channel carries %v while the sidecar waits for its pane, want %d", msgIDs(r.Messages), slow.ID)
	}
	if r := h.pathWait(t, bob, "tmux", tmux); len(r.Messages) != 0 {
		t.Errorf("the sidecar, looking again before it pastes, gets %v while the channel carries it", msgIDs(r.Messages))
	}
	h.confirm(t, bob, "channel", slow.ID)

	// Handed to a hook that never printed it (it gave up): the others pass
	// it over until the claim lapses; it stays queued.
	lost := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "printed nowhere"})
	if got := inject(); !slices.Equal(got, []int64{lost.ID}) {
		t.Fatalf("the hook injects %v, want %d", got, lost.ID)
	}
	if r := h.pathWait(t, bob, "channel", channel); len(r.Messages) != 0 {
		t.Errorf("the channel carries %v while the hook holds it", msgIDs(r.Messages))
	}
	h.Clock.Advance(time.Minute)
	if r := h.pathWait(t, bob, "channel", channel); !slices.Equal(msgIDs(r.Messages), []int64{lost.ID}) {
		t.Errorf("after the hook's claim lapsed the channel carries %v, want %d", msgIDs(r.Messages), lost.ID)
	}
	h.wantState(t, lost.ID, "bob", hub.StateQueued, 0)
}

// TestDeepWorkHoldsLowPriority: while the agent is in deep work its paths
// pass over low-priority messages (its own waits and reads do not); when
// it ends, one digest names those it has not taken in since, once.
func TestDeepWorkHoldsLowPriority(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	set := hub.DefaultScheduleSettings()
	if _, err := h.StartDeepWork(ctx, bob, hub.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "the parser"}); err != nil {
		t.Fatal(err)
	}
	low1 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "when you have a minute: lunch?", Priority: hub.PriorityLow})
	normal := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "review please"})
	low2 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "fyi the wiki moved", Priority: hub.PriorityLow})
	pat, _, err := hub.NewPeople(h.Core).CreatePerson(ctx, "pat", nil)
	if err != nil {
		t.Fatal(err)
	}
	byPat := h.post(t, nil, hub.PostRequest{To: []string{"bob"}, Body: "Answer from alice: ship it", Priority: hub.PriorityLow, Person: pat})
	low3 := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "read later", Priority: hub.PriorityLow})

	r := h.pathWait(t, bob, "channel", 0)
	if got := msgIDs(r.Messages); !slices.Equal(got, []int64{normal.ID}) || r.Cursor != low3.ID {
		t.Fatalf("in deep work the channel carries %v (cursor %d), want only %d (cursor past the held ones)", got, r.Cursor, normal.ID)
	}
	h.confirm(t, bob, "channel", normal.ID)
	// bob's own peek with a cursor still returns a held one: he asked.
	if w, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0), AfterID: hub.FormatMessageID(byPat.ID)}); err != nil || !slices.Equal(msgIDs(w.Messages), []int64{low3.ID}) {
		t.Fatalf("bob's own wait after %d = %v, %v; want %d", byPat.ID, w, err, low3.ID)
	}
	if n, _, err := h.SendDigests(ctx, h.Clock.Now(), set); err != nil || n != 0 {
		t.Fatalf("digests during deep work = %d, %v; want none", n, err)
	}

	h.Clock.Advance(10 * time.Minute)
	if _, err := h.CreateActivityLog(ctx, bob, hub.ActivityLog{Type: hub.ActivityCreation, Title: "parser done"}); err != nil {
		t.Fatal(err)
	}
	if err := h.FlushDeliveries(ctx); err != nil { // the holds, as the orchestrator's beat step writes them
		t.Fatal(err)
	}
	if n, _, err := h.SendDigests(ctx, h.Clock.Now(), set); err != nil || n != 1 {
		t.Fatalf("digests once deep work ended = %d, %v; want 1", n, err)
	}
	var digest *hub.Message
	for _, m := range h.inbox(t, bob) {
		if m.From == hub.SenderOrchestrator {
			digest = m
		}
	}
	if digest == nil {
		t.Fatal("no digest in bob's inbox")
	}
	// Each names its sender's kind, as every message an agent reads does.
	for _, want := range []string{"@bob", "3 low-priority messages", "#" + hub.FormatMessageID(low1.ID) + " from alice (agent): when you have a minute: lunch?", "#" + hub.FormatMessageID(low2.ID),
		"#" + hub.FormatMessageID(byPat.ID) + " from pat (person): Answer from alice", "read_messages after=" + hub.FormatMessageID(low1.ID-1)} {
		if !strings.Contains(digest.Body, want) {
			t.Errorf("digest %q lacks %q", digest.Body, want)
		}
	}
	if strings.Contains(digest.Body, "#"+hub.FormatMessageID(low3.ID)) {
		t.Errorf("digest %q names %d, which bob's own wait took in", digest.Body, low3.ID)
	}
	if n, _, err := h.SendDigests(ctx, h.Clock.Now(), set); err != nil || n != 0 {
		t.Errorf("a second round = %d digests, %v; want none", n, err)
	}
}

// TestNoticeCapPerHour: past the cap, an acknowledgement nudge is dropped
// with an event; the next clock hour, nudges go out again.
func TestNoticeCapPerHour(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice := as[0]
	set := hub.DefaultScheduleSettings()
	set.NoticeCap = 2
	start := h.Clock.Now().Truncate(time.Hour).Add(time.Hour) // the start of a clock hour
	h.Clock.Set(start)
	var sent []int
	for i := range 4 {
		h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "ack " + strconv.Itoa(i), AckRequired: true})
		h.Clock.Advance(set.AckOverdue)
		n, _, err := h.CheckAckOverdue(ctx, h.Clock.Now(), set)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, n)
	}
	if want := []int{1, 1, 0, 0}; !slices.Equal(sent, want) {
		t.Errorf("acknowledgement nudges sent per tick = %v, want %v (cap 2 per hour)", sent, want)
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Agent: "bob", Kind: string(hub.EventNoticeDropped)})
	if err != nil || len(evs) != 2 || !strings.Contains(evs[0].Detail, "notice cap (2 per hour)") {
		t.Errorf("dropped-notice events = %+v, %v; want 2 naming the cap", evs, err)
	}
	h.Clock.Set(start.Add(time.Hour))
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "next hour", AckRequired: true})
	h.Clock.Advance(set.AckOverdue)
	if n, _, err := h.CheckAckOverdue(ctx, h.Clock.Now(), set); err != nil || n != 1 {
		t.Errorf("the next hour: %d nudges, %v; want 1", n, err)
	}
}

// TestQueuedNotice: the sender of an urgent or ack_required message still
// queued for some recipients after the delay gets one notice naming them
// and why; a message taken in by all, or sent by the hub, gets none.
func TestQueuedNotice(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol", "dave")
	alice, bob, dave := as[0], as[1], as[3]
	set := hub.DefaultScheduleSettings()
	urgent := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol", "dave"}, Body: "prod is down", Priority: hub.PriorityUrgent})
	taken := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "ack this", AckRequired: true})
	h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "plain"})
	if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0)}); err != nil { // bob takes everything in
		t.Fatal(err)
	}
	h.Clock.Advance(set.QueuedNoticeAfter - time.Second)
	if n, _, err := h.CheckQueued(ctx, h.Clock.Now(), set); err != nil || n != 0 {
		t.Fatalf("before the delay: %d notices, %v", n, err)
	}
	// dave's stop hook just ran: reachable through hook, nothing injected.
	if _, err := h.CheckStop(ctx, dave, false); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(time.Second)
	if n, _, err := h.CheckQueued(ctx, h.Clock.Now(), set); err != nil || n != 1 {
		t.Fatalf("after the delay: %d notices, %v; want 1", n, err)
	}
	var notice *hub.Message
	for _, m := range h.inbox(t, alice) {
		if m.From == hub.SenderOrchestrator {
			notice = m
		}
	}
	if notice == nil {
		t.Fatal("alice got no notice")
	}
	for _, want := range []string{"@alice", "#" + hub.FormatMessageID(urgent.ID) + " (urgent)", "carol (never connected yet)", "dave (reachable through hook, not taken in yet)"} {
		if !strings.Contains(notice.Body, want) {
			t.Errorf("notice %q lacks %q", notice.Body, want)
		}
	}
	if strings.Contains(notice.Body, "bob") || strings.Contains(notice.Body, "#"+hub.FormatMessageID(taken.ID)) {
		t.Errorf("notice %q names bob or the message he took in", notice.Body)
	}
	h.Clock.Advance(time.Hour)
	if n, _, err := h.CheckQueued(ctx, h.Clock.Now(), set); err != nil || n != 0 {
		t.Errorf("a second look: %d notices, %v; want none (once per message)", n, err)
	}
}
