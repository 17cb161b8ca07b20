package orchestrator_test

import (
	"testing"
	"time"
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
