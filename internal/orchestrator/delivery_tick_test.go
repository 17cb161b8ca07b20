package orchestrator_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// ticks advances the clock by step and ticks until d has passed, and sums
// what the delivery steps did.
func (r *rig) deliveryTicks(d, step time.Duration) (retired, digests, queued int) {
	r.tb.Helper()
	for end := r.clock.Now().Add(d); r.clock.Now().Before(end); {
		r.clock.Advance(step)
		rep := r.tick()
		retired, digests, queued = retired+rep.Retired, digests+rep.Digests, queued+rep.Queued
	}
	return retired, digests, queued
}

// peers returns the names in the peer list of the agent of token.
func (r *rig) peers(token string) []string {
	r.tb.Helper()
	ps, err := r.svc.Messages.ListPeers(r.ctx, r.call(token))
	if err != nil {
		r.tb.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// TestTickRetiresGhosts: ticking over a fake clock, an agent silent past
// --retire-after is retired once (an event), kept across a restart, left
// out of its peers' lists; its next call brings it back (an event at the
// next tick); an agent that keeps calling is never retired.
func TestTickRetiresGhosts(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) {
		s.InactivityTimeout, s.MentionAge = 24*time.Hour, 24*time.Hour
		s.RetireAfter = 2 * time.Hour
	})
	_, ghostTok := r.agent("ghost")
	_, busyTok := r.agent("busy")
	var retired int
	for range 30 { // 2.5 h in 5-minute steps; busy calls at each
		r.call(busyTok)
		n, _, _ := r.deliveryTicks(5*time.Minute, 5*time.Minute)
		retired += n
	}
	if retired != 1 || len(r.events("ghost", string(hub.EventRetired))) != 1 || len(r.events("busy", string(hub.EventRetired))) != 0 {
		t.Fatalf("retired %d (ghost's events %v): want ghost once, busy never", retired, r.events("ghost", ""))
	}
	r.restart()
	if got := r.peers(busyTok); !slices.Equal(got, []string{"busy"}) {
		t.Errorf("after a restart busy's peers = %v, want ghost left out", got)
	}
	r.call(ghostTok)
	if got := r.peers(busyTok); !slices.Equal(got, []string{"busy", "ghost"}) {
		t.Errorf("after ghost called busy's peers = %v, want ghost back at once", got)
	}
	r.deliveryTicks(5*time.Second, 5*time.Second)
	if evs := r.events("ghost", string(hub.EventReturned)); len(evs) != 1 {
		t.Errorf("ghost's returned events = %v, want 1", evs)
	}
}

// TestTickDigestWhenDeepWorkExpires: a low-priority message held from the
// agent's channel path during strict deep work comes as one digest at the
// first tick after the deep work expired, and only then.
func TestTickDigestWhenDeepWorkExpires(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) { s.InactivityTimeout, s.MentionAge = 24*time.Hour, 24*time.Hour })
	alice, _ := r.agent("alice")
	_, bobTok := r.agent("bob")
	bob := r.call(bobTok)
	if _, err := r.svc.Liveness.StartDeepWork(r.ctx, bob, hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "the migration", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	low, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "cake in the kitchen", Priority: hub.PriorityLow})
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.svc.Waits.Wait(r.ctx, bob, hub.WaitRequest{TimeoutSeconds: new(int32), Via: "channel"})
	if err != nil || len(w.Messages) != 0 || w.Cursor != low.ID {
		t.Fatalf("bob's channel during deep work = %v, %v; want nothing, the cursor past %d", w, err, low.ID)
	}
	if _, digests, _ := r.deliveryTicks(29*time.Minute, time.Minute); digests != 0 {
		t.Fatalf("%d digests during the deep work", digests)
	}
	if _, digests, _ := r.deliveryTicks(2*time.Minute, time.Minute); digests != 1 {
		t.Fatalf("%d digests once the deep work expired, want 1", digests)
	}
	if _, digests, _ := r.deliveryTicks(time.Hour, 5*time.Minute); digests != 0 {
		t.Fatalf("%d more digests, want none", digests)
	}
	got := r.inbox(bobTok, hub.KindNudge)
	if len(got) != 1 || !contains(got[0].Body, "#"+strconv.FormatInt(low.ID, 10)+" from alice (agent): cake in the kitchen") {
		t.Errorf("bob's notices %v: want one digest naming message %d", got, low.ID)
	}
}

// TestTickQueuedNotice: an urgent message still queued for an agent that
// never connected is named to its sender once, after --queued-notice-after.
func TestTickQueuedNotice(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) {
		s.InactivityTimeout, s.MentionAge = 24*time.Hour, 24*time.Hour
		s.QueuedNoticeAfter = 5 * time.Minute
	})
	alice, aliceTok := r.agent("alice")
	r.agent("carol")
	m, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"carol"}, Body: "prod is down", Priority: hub.PriorityUrgent})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, queued := r.deliveryTicks(5*time.Minute-5*time.Second, 5*time.Second); queued != 0 {
		t.Fatalf("%d notices before the delay", queued)
	}
	if _, _, queued := r.deliveryTicks(time.Hour, 5*time.Second); queued != 1 {
		t.Fatalf("%d notices after the delay, want 1", queued)
	}
	got := r.inbox(aliceTok, hub.KindNudge)
	if len(got) != 1 || !contains(got[0].Body, "#"+strconv.FormatInt(m.ID, 10)+" (urgent)") || !contains(got[0].Body, "carol (never connected yet)") {
		t.Errorf("alice's notices %v: want one naming message %d and carol", got, m.ID)
	}
}
