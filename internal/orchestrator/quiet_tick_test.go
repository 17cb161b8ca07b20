package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestQuietTickWritesNothing: a tick with nothing due takes no turn of the
// store's writer, step by step: a write waits behind every post and
// heartbeat queued before it, so a step that opened a write transaction
// to find nothing to do made the tick as long as the writer's backlog.
// Each step looks for due work in a read first (from an index) and writes
// only when it found some.
func TestQuietTickWritesNothing(t *testing.T) {
	r := newRig(t)
	_, token := r.agent("ada")
	r.checkpoint(token)
	for range 3 { // the first ticks write the presence of the calls above and advance the beat
		r.clock.Advance(r.set.TickInterval)
		r.tick()
	}
	r.clock.Advance(time.Second) // within the beat: nothing is due
	_, before := r.db.WriteBatches()
	rep := r.tick()
	if _, after := r.db.WriteBatches(); after != before {
		t.Errorf("a tick with nothing due made %d writes, want none (steps: %v)", after-before, rep.Steps)
	}
}

// TestDigestsWithNothingDueWriteNothing: with no digest due, the digest
// step leaves the delivery marks of replies sent (here one that held a
// message during deep work) to the beat step, which writes them beside
// the presence, instead of a write of its own.
func TestDigestsWithNothingDueWriteNothing(t *testing.T) {
	r := newRig(t)
	alice, _ := r.agent("alice")
	_, bobTok := r.agent("bob")
	bob := r.call(bobTok)
	if _, err := r.svc.Liveness.StartDeepWork(r.ctx, bob, hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "the migration", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Messages.Post(r.ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "cake in the kitchen", Priority: hub.PriorityLow}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Waits.Wait(r.ctx, bob, hub.WaitRequest{TimeoutSeconds: new(int32), Via: "channel"}); err != nil { // holds the message: a mark in memory
		t.Fatal(err)
	}
	_, before := r.db.WriteBatches()
	if n, _, err := r.svc.Receipts.SendDigests(r.ctx, r.clock.Now(), r.set); err != nil || n != 0 {
		t.Fatalf("SendDigests during the deep work = %d, %v; want none", n, err)
	}
	if _, after := r.db.WriteBatches(); after != before {
		t.Errorf("the digest step with nothing due made %d writes, want none", after-before)
	}
}
