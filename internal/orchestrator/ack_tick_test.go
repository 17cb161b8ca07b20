package orchestrator_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestTickNudgesOverdueAcks: a recipient that has not acknowledged a
// message asking for it gets one nudge once the acknowledgement is overdue,
// and no other however many ticks (and restarts) follow; a recipient that
// acknowledged in time gets none.
func TestTickNudgesOverdueAcks(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) {
		s.InactivityTimeout, s.MentionAge = 24*time.Hour, 24*time.Hour // only acknowledgement nudges here
		s.AckOverdue = 3 * time.Minute
	})
	alice, _ := r.agent("alice")
	_, bobTok := r.agent("bob")
	_, carolTok := r.agent("carol")
	m, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"bob", "carol"}, Body: "freeze main, ack please", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Receipts.Acknowledge(r.ctx, r.call(carolTok), []string{strconv.FormatInt(m.ID, 10)}); err != nil {
		t.Fatal(err)
	}
	ticks := func(d time.Duration) (nudged int) {
		for end := r.clock.Now().Add(d); r.clock.Now().Before(end); {
			r.clock.Advance(5 * time.Second)
			nudged += r.tick().AckNudged
		}
		return nudged
	}
	if n := ticks(3*time.Minute - 5*time.Second); n != 0 {
		t.Fatalf("before the acknowledgement is overdue: %d nudges", n)
	}
	if n := ticks(5 * time.Second); n != 1 {
		t.Fatalf("when it becomes overdue: %d nudges, want 1", n)
	}
	r.restart()
	if n := ticks(time.Hour); n != 0 {
		t.Fatalf("after the nudge and a restart: %d more nudges, want 0", n)
	}
	if got := r.inbox(bobTok, hub.KindNudge); len(got) != 1 || !contains(got[0].Body, "#"+strconv.FormatInt(m.ID, 10)+" from alice") {
		t.Errorf("bob's nudges %v: want one naming message %d", got, m.ID)
	}
	if got := r.inbox(carolTok, hub.KindNudge); len(got) != 0 {
		t.Errorf("carol acknowledged in time but got %d nudges", len(got))
	}
	if evs := r.events("bob", string(hub.EventNudge)); len(evs) != 1 || !contains(evs[0].Detail, "acknowledgement overdue") {
		t.Errorf("bob's nudge events %v: want one about the acknowledgement", evs)
	}
}
