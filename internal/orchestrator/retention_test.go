package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// With a retention, each tick deletes the messages older than it, a batch
// per write transaction; without one nothing is deleted.
func TestTickRetention(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) { s.RetainMessages = 24 * time.Hour; s.BatchLimit = 7 })
	alice, _ := r.agent("alice")
	_, bobTok := r.agent("bob")
	for range 20 {
		if _, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "old"}); err != nil {
			t.Fatal(err)
		}
	}
	r.clock.Advance(23 * time.Hour)
	if rep := r.tick(); rep.Pruned != 0 {
		t.Fatalf("pruned %d messages younger than the retention", rep.Pruned)
	}
	if _, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "young"}); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(2 * time.Hour)
	if rep := r.tick(); rep.Pruned != 20 {
		t.Errorf("pruned %d, want the 20 messages older than 24 h", rep.Pruned)
	}
	if got := r.inbox(bobTok, hub.KindMessage); len(got) != 1 || got[0].Body != "young" {
		t.Errorf("bob's inbox after the retention: %d messages, want the young one", len(got))
	}

	keep := newRig(t)
	a, _ := keep.agent("alice")
	if _, err := keep.svc.Messages.Post(keep.ctx, a, "", hub.PostRequest{To: []string{"alice"}, Body: "kept"}); err != nil {
		t.Fatal(err)
	}
	keep.clock.Advance(1000 * time.Hour)
	if rep := keep.tick(); rep.Pruned != 0 {
		t.Errorf("pruned %d without a retention", rep.Pruned)
	}
}
