package hub_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// live returns the kinds of a's live paths, as its views show them.
func (h *testHub) live(a *hub.Agent) []string {
	var out []string
	for _, p := range h.ReachOf(a).Paths {
		if p.Live {
			out = append(out, p.Via.String())
		}
	}
	return out
}

// TestReachabilityFollowsThePaths: an agent is reachable while a wait of
// its is parked (its own, the channel push's, the sidecar's), for a short
// window after a wait answered, for a few minutes after its hooks ran;
// not once the last path closed: at once when its caller went away or its
// session ended, within one tick of the window otherwise. A post names the
// recipients no live path reaches, and says since when.
func TestReachabilityFollowsThePaths(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob", "carol")
	alice, bob, carol := as[0], as[1], as[2]
	set := hub.DefaultScheduleSettings()
	tick := set.TickInterval

	if r := h.ReachOf(bob); r.Reachable || len(r.Paths) != 0 || !r.Since.IsZero() {
		t.Fatalf("a new agent: %+v, want unreachable, no path seen", r)
	}
	m := h.post(t, alice, hub.PostRequest{To: []string{"bob"}, Body: "hi", Mentions: []string{"carol"}})
	us, note := h.Unreachable(alice, m)
	if len(us) != 2 || us[0].Name != "bob" || us[1].Name != "carol" || !strings.Contains(note, "bob (never connected yet)") {
		t.Errorf("unreachable = %+v, note %q; want bob then carol, never connected", us, note)
	}

	// A parked wait of bob's own.
	wctx, cancel := context.WithCancel(ctx)
	w, err := h.Begin(wctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(30), AfterID: hub.FormatMessageID(m.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.live(bob); !slices.Equal(got, []string{"wait"}) {
		t.Fatalf("with a parked wait bob's live paths = %v, want [wait]", got)
	}
	m2 := h.post(t, alice, hub.PostRequest{To: []string{"bob", "carol"}, Body: "again"})
	if us, _ := h.Unreachable(alice, m2); len(us) != 1 || us[0].Name != "carol" {
		t.Errorf("unreachable = %+v, want only carol", us)
	}
	// The caller goes away: the path closes at once.
	cancel()
	if _, err := w.Finish(wctx); err == nil {
		t.Fatal("a wait whose caller went away answered")
	}
	if r := h.ReachOf(bob); r.Reachable || len(r.Paths) != 1 || r.Paths[0].Live || !r.Since.Equal(h.Clock.Now()) {
		t.Errorf("after its caller went away: %+v, want unreachable, the wait seen now", r)
	}

	// A wait that answers: live for its window, not past one tick of it.
	if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0)}); err != nil { // a peek opens no path
		t.Fatal(err)
	}
	if h.ReachOf(bob).Reachable {
		t.Error("a peek made bob reachable")
	}
	done := make(chan error, 1)
	go func() {
		_, err := h.Wait(ctx, carol, hub.WaitRequest{TimeoutSeconds: seconds(1), AfterID: hub.FormatMessageID(m2.ID)})
		done <- err
	}()
	waitFor(t, "carol's wait to park", func() bool { return h.Waiters.AgentCount(carol.ID) == 1 })
	h.Clock.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := h.live(carol); !slices.Equal(got, []string{"wait"}) {
		t.Errorf("right after carol's wait timed out: live %v, want [wait]", got)
	}
	h.Clock.Advance(tick)
	if h.ReachOf(carol).Reachable {
		t.Errorf("a tick after carol's wait ended she is still reachable: %+v", h.ReachOf(carol))
	}

	// Hooks: live for HookWindow after they ran, closed by SessionEnd.
	if _, err := h.TakeInjection(ctx, carol, 0); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(hub.HookWindow - time.Second)
	if got := h.live(carol); !slices.Equal(got, []string{"hook"}) {
		t.Errorf("%v after carol's hook ran: live %v, want [hook]", hub.HookWindow-time.Second, got)
	}
	h.Clock.Advance(time.Second)
	if h.ReachOf(carol).Reachable {
		t.Error("carol reachable past the hook window")
	}
	if _, err := h.CheckStop(ctx, carol, false); err != nil {
		t.Fatal(err)
	}
	if err := h.EndSession(ctx, carol, "hook"); err != nil {
		t.Fatal(err)
	}
	if h.ReachOf(carol).Reachable {
		t.Error("carol reachable through hook after her SessionEnd")
	}
	if err := h.EndSession(ctx, carol, "tmux"); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("EndSession via tmux = %v, want EINVALID", err)
	}

	// The tmux sidecar's wait: live for a minute after it answered (the
	// sidecar may be waiting for its pane to go idle).
	if _, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(0), Via: "tmux"}); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := h.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(1), Via: "tmux", AfterID: hub.FormatMessageID(m2.ID)})
		done <- err
	}()
	waitFor(t, "the sidecar's wait to park", func() bool { return h.Waiters.AgentCount(bob.ID) == 1 })
	if got := h.live(bob); !slices.Equal(got, []string{"tmux"}) {
		t.Errorf("with the sidecar parked: live %v, want [tmux]", got)
	}
	h.Clock.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(hub.TmuxGrace - time.Second)
	if got := h.live(bob); !slices.Equal(got, []string{"tmux"}) {
		t.Errorf("%v after the sidecar's wait: live %v, want [tmux]", hub.TmuxGrace-time.Second, got)
	}
	h.Clock.Advance(tick)
	if h.ReachOf(bob).Reachable {
		t.Error("bob reachable a tick past the sidecar's window")
	}
}

// TestReachabilityAcrossReplicas: two hub processes on one store see each
// other's paths once each has written its own and read the other's (a
// tick each); a path that closes on one stops counting on the other after
// the next ticks, and a replica that dies stops counting once its rows run
// out.
func TestReachabilityAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := newTestHub(t)
	b := a.over(t, a.DB)
	ctx := context.Background()
	set := hub.DefaultScheduleSettings()
	bob, _ := a.agent(t, "bob")
	flush := func(s *services) {
		t.Helper()
		if _, err := s.FlushPresence(ctx, a.Clock.Now(), set); err != nil {
			t.Fatal(err)
		}
	}
	flush(b) // b has read once: what follows is new to it

	wctx, cancel := context.WithCancel(ctx)
	w, err := a.Begin(wctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(30)})
	if err != nil {
		t.Fatal(err)
	}
	if b.ReachOf(bob).Reachable {
		t.Fatal("b sees bob's wait on a before a tick")
	}
	flush(a.services)
	flush(b)
	if r := b.ReachOf(bob); !r.Reachable || len(r.Paths) != 1 || r.Paths[0].Via != hub.ViaWait {
		t.Fatalf("after a tick each, b sees %+v; want bob reachable by his wait on a", r)
	}
	// Still parked two minutes later: a writes its row again before it runs out.
	for range 24 {
		a.Clock.Advance(set.TickInterval)
		flush(a.services)
		flush(b)
	}
	if !b.ReachOf(bob).Reachable {
		t.Fatal("b lost bob's wait parked on a for two minutes")
	}
	cancel()
	w.Finish(wctx)
	flush(a.services)
	flush(b)
	if r := b.ReachOf(bob); r.Reachable {
		t.Errorf("after bob's wait on a closed and a tick each, b sees %+v; want unreachable", r)
	}

	// A replica that dies with a wait parked: its row runs out.
	c := a.over(t, a.DB)
	if _, err := c.Begin(ctx, bob, hub.WaitRequest{TimeoutSeconds: seconds(60)}); err != nil {
		t.Fatal(err)
	}
	flush(c)
	flush(b)
	if !b.ReachOf(bob).Reachable {
		t.Fatal("b does not see bob's wait on c")
	}
	a.Clock.Advance(2*time.Minute + time.Second) // c writes nothing more
	flush(b)
	if b.ReachOf(bob).Reachable {
		t.Error("b still sees bob's wait on c, silent for over two minutes")
	}
}

// TestEndSessionOfflineAtOnce: a clean end of a session shows the agent
// offline at once (not after the inactivity time-out), on this process and,
// after a tick, from the store; its next call brings it back.
func TestEndSessionOfflineAtOnce(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, tok := h.agent(t, "alice")
	if p := h.PresenceOf(alice); p.State != hub.PresenceActive {
		t.Fatalf("after a call alice is %s, want active", p.State)
	}
	if err := h.EndSession(ctx, alice, ""); err != nil {
		t.Fatal(err)
	}
	if p := h.PresenceOf(alice); p.State != hub.PresenceOffline {
		t.Errorf("after her session ended alice is %s, want offline", p.State)
	}
	st, err := h.Status(ctx, h.auth(t, mustToken(t, h, "bob")))
	if err != nil || slices.Contains(st.Online, "alice") {
		t.Errorf("bob's status lists online %v (%v): alice ended her session", st.Online, err)
	}
	if _, err := h.FlushPresence(ctx, h.Clock.Now(), hub.DefaultScheduleSettings()); err != nil {
		t.Fatal(err)
	}
	fresh := h.over(t, h.DB) // another process reads it from the store
	stored, err := fresh.Agent(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if p := fresh.PresenceOf(stored); p.State != hub.PresenceOffline {
		t.Errorf("from the store alice is %s, want offline", p.State)
	}
	h.Clock.Advance(time.Second)
	back := h.auth(t, tok)
	if p := h.PresenceOf(back); p.State != hub.PresenceActive {
		t.Errorf("after a new call alice is %s, want active", p.State)
	}
}

// mustToken creates agent name and returns its token.
func mustToken(t *testing.T, h *testHub, name string) string {
	t.Helper()
	_, tok := h.agent(t, name)
	return tok
}

// TestRetirementAndReturn: over a fake clock, agents silent past the
// retirement age and holding nothing are retired (an event each) and left
// out of their peers' lists; one holding a reservation is not; a retired
// agent's next call brings it back at once, and to the store at the next
// flush (an event); 0 retires no one.
func TestRetirementAndReturn(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	set := hub.DefaultScheduleSettings()
	ghost, ghostTok := h.agent(t, "ghost")
	_, _ = h.agent(t, "idle")
	holder, holderTok := h.agent(t, "holder")
	watcher, watcherTok := h.agent(t, "watcher")
	flush := func() {
		t.Helper()
		if _, err := h.FlushPresence(ctx, h.Clock.Now(), set); err != nil {
			t.Fatal(err)
		}
	}
	retire := func(s hub.ScheduleSettings) int {
		t.Helper()
		flush()
		n, _, err := h.RetireAgents(ctx, h.Clock.Now(), s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	peers := func(a *hub.Agent) []string {
		t.Helper()
		ps, err := h.ListPeers(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	}
	flush()
	h.Clock.Advance(set.RetireAfter - time.Minute)
	holder = h.auth(t, holderTok)
	if _, _, err := h.ReservePaths(ctx, holder, hub.ReservationRequest{Patterns: []string{"src/"}, TTL: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if n := retire(set); n != 0 {
		t.Fatalf("before the age: %d retired", n)
	}
	h.Clock.Advance(2 * time.Minute)
	watcher = h.auth(t, watcherTok) // the watcher keeps calling
	off := set
	off.RetireAfter = 0
	if n := retire(off); n != 0 {
		t.Fatalf("with --retire-after 0: %d retired", n)
	}
	if n := retire(set); n != 2 {
		t.Fatalf("past the age: %d retired, want ghost and idle (holder holds a reservation, watcher calls)", n)
	}
	if got := peers(watcher); !slices.Equal(got, []string{"holder", "watcher"}) {
		t.Errorf("watcher's peers = %v, want holder and watcher (ghost and idle retired)", got)
	}
	evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Kind: string(hub.EventRetired)})
	if err != nil || len(evs) != 2 || !strings.Contains(evs[0].Detail, "retire after 168h") {
		t.Errorf("retired events = %+v, %v", evs, err)
	}
	if n := retire(set); n != 0 {
		t.Errorf("a second round retired %d", n)
	}

	// ghost calls: back at once, the store follows at the next flush.
	h.Clock.Advance(time.Second)
	ghost = h.auth(t, ghostTok)
	if got := peers(watcher); !slices.Equal(got, []string{"ghost", "holder", "watcher"}) {
		t.Errorf("after ghost's call watcher's peers = %v, want ghost and holder", got)
	}
	flush()
	stored, err := h.Agent(ctx, "ghost")
	if err != nil || !stored.RetiredAt.IsZero() {
		t.Errorf("ghost in the store after the flush: retired %v (%v), want not retired", stored.RetiredAt, err)
	}
	if evs, err := h.ListEvents(ctx, hub.ListEventsRequest{Agent: "ghost", Kind: string(hub.EventReturned)}); err != nil || len(evs) != 1 {
		t.Errorf("ghost's returned events = %+v, %v; want 1", evs, err)
	}
	idle, err := h.Agent(ctx, "idle")
	if err != nil || idle.RetiredAt.IsZero() {
		t.Errorf("idle: retired %v (%v), want retired still", idle.RetiredAt, err)
	}
	_ = ghost
}

// TestPathTrackerWrites: a tracker writes a path when it changes, an open
// one again before its row runs out, a hook seen at every step once per
// half window; it ignores its own rows read back and takes in the others'.
func TestPathTrackerWrites(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := hub.NewPathTracker("me")
	rows := func(at time.Time) []string {
		var out []string
		for _, r := range tr.Flush(at) {
			out = append(out, r.Via.String()+"@"+r.LastSeenAt.Sub(t0).String()+"-"+r.LiveUntil.Sub(t0).String())
		}
		return out
	}
	tr.Open(1, hub.ViaWait, t0)
	if got, want := rows(t0), []string{"wait@0s-2m0s"}; !slices.Equal(got, want) {
		t.Errorf("after Open: %v, want %v", got, want)
	}
	if got := rows(t0.Add(59 * time.Second)); len(got) != 0 {
		t.Errorf("an open path written again within a minute: %v", got)
	}
	if got, want := rows(t0.Add(61*time.Second)), []string{"wait@1m1s-3m1s"}; !slices.Equal(got, want) {
		t.Errorf("an open path a minute on: %v, want %v", got, want)
	}
	tr.Close(1, hub.ViaWait, t0.Add(70*time.Second), false)
	if got, want := rows(t0.Add(70*time.Second)), []string{"wait@1m10s-1m15s"}; !slices.Equal(got, want) {
		t.Errorf("after Close: %v, want %v", got, want)
	}
	var written []int
	for s := 0; s <= 200; s += 10 { // a hook at every step
		tr.Seen(2, hub.ViaHook, t0.Add(time.Duration(s)*time.Second))
		if len(rows(t0.Add(time.Duration(s)*time.Second))) > 0 {
			written = append(written, s)
		}
	}
	if want := []int{0, 160}; !slices.Equal(written, want) {
		t.Errorf("a hook seen every 10 s for 200 s: written at %v s, want %v (again once its row runs out within half its window)", written, want)
	}
	tr.Load([]hub.PathRow{
		{AgentID: 3, Via: hub.ViaWait, LastSeenAt: t0, LiveUntil: t0.Add(time.Minute), Replica: "me"},
		{AgentID: 4, Via: hub.ViaChannel, LastSeenAt: t0, LiveUntil: t0.Add(time.Minute), Replica: "other"},
	})
	if r := tr.Reach(3, t0); r.Reachable || len(r.Paths) != 0 {
		t.Errorf("its own row read back counts: %+v", r)
	}
	if r := tr.Reach(4, t0.Add(59*time.Second)); !r.Reachable || r.Paths[0].Via != hub.ViaChannel {
		t.Errorf("another replica's row: %+v, want reachable by channel", r)
	}
	if r := tr.Reach(4, t0.Add(time.Minute)); r.Reachable || !r.Since.Equal(t0) {
		t.Errorf("another replica's row run out: %+v, want unreachable since t0", r)
	}
}

func TestNoticeAllowed(t *testing.T) {
	t.Parallel()
	hour := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	c := hub.NoticeCount{}
	var got []bool
	for _, at := range []time.Duration{0, 10 * time.Minute, 59 * time.Minute, 60 * time.Minute, 61 * time.Minute} {
		var ok bool
		ok, c = hub.NoticeAllowed(c, hour.Add(at), 2)
		got = append(got, ok)
	}
	if want := []bool{true, true, false, true, true}; !slices.Equal(got, want) {
		t.Errorf("allowed %v, want %v (2 per clock hour)", got, want)
	}
	if ok, c := hub.NoticeAllowed(hub.NoticeCount{Window: hour, Sent: 100}, hour, 0); !ok || c.Sent != 101 {
		t.Errorf("no cap: %v %+v", ok, c)
	}
}

func TestUnreachableNote(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	one := []hub.Unreachable{{Name: "carol", Since: now.Add(-58 * time.Minute)}}
	if got, want := hub.UnreachableNote(one, hub.LocaleEN, time.UTC, now), "Stored for carol: no live path since 14:02; carol gets it at its next wait, read or session."; got != want {
		t.Errorf("note = %q, want %q", got, want)
	}
	two := append(one, hub.Unreachable{Name: "dave"}, hub.Unreachable{Name: "erin", Since: now.Add(-48 * time.Hour)})
	got := hub.UnreachableNote(two, hub.LocaleEN, time.UTC, now)
	for _, want := range []string{"carol (no live path since 14:02)", "dave (never connected yet)", "erin (no live path since Dec 31 15:00)", "each gets it"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if ja := hub.UnreachableNote(one, hub.LocaleJA, time.UTC, now); !strings.Contains(ja, "carol（14:02 から届く経路なし）") && !strings.Contains(ja, "carol (14:02 から届く経路なし)") {
		t.Errorf("ja note = %q", ja)
	}
	if hub.UnreachableNote(nil, hub.LocaleEN, time.UTC, now) != "" {
		t.Error("a note for no one")
	}
}
