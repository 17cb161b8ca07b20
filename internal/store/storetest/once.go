package storetest

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// record is RecordNudge or RecordPulse of one agent, bound to a key.
type record func(tx hub.Tx, key int, at time.Time) (bool, error)

// checkOnce records key 1 through one handle, then tries it again through
// a second handle (as a stale orchestrator on another replica would) and
// expects it ignored; key 2 is new; a day later, the records of key 1 and
// 2 are pruned, so recording them again succeeds.
func checkOnce(t *testing.T, h NewDB, what string, rec func(a *hub.Agent) record) {
	t.Helper()
	open := h(t)
	db, other := open(), open()
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	try := func(db hub.Store, a *hub.Agent, key int, at time.Time, want bool) {
		t.Helper()
		mustUpdate(t, db, func(tx hub.Tx) error {
			got, err := rec(a)(tx, key, at)
			if err == nil && got != want {
				t.Errorf("%s %d of %s at %s recorded = %v, want %v", what, key, a.Name, at.Format(time.TimeOnly), got, want)
			}
			return err
		})
	}
	try(db, ann, 1, t0, true)
	try(other, ann, 1, t0.Add(time.Second), false) // the double
	try(db, ann, 1, t0, false)
	try(other, bob, 1, t0, true) // another agent's is its own
	try(db, ann, 2, t0.Add(time.Minute), true)
	try(other, ann, 2, t0.Add(time.Minute), false)
	later := t0.Add(hub.SentKept + 2*time.Minute)
	try(db, ann, 3, later, true) // prunes ann's records older than SentKept
	try(db, ann, 1, later, true)
	try(db, bob, 1, later, false) // bob's were not pruned: only ann's
}

func testRecordNudgeOnce(t *testing.T, h NewDB) {
	t.Parallel()
	checkOnce(t, h, "nudge", func(a *hub.Agent) record {
		return func(tx hub.Tx, n int, at time.Time) (bool, error) {
			return tx.RecordNudge(a.ID, "quiet since 09:00", n, at)
		}
	})
	// The same number in another episode is another nudge.
	db := fresh(t, h)
	ann := createAgent(t, db, "ann")
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, episode := range []string{"a", "b"} {
			if ok, err := tx.RecordNudge(ann.ID, episode, 1, t0); err != nil || !ok {
				t.Errorf("RecordNudge(episode %s, 1) = %v, %v; want true", episode, ok, err)
			}
		}
		return nil
	})
}

func testRecordPulseOnce(t *testing.T, h NewDB) {
	t.Parallel()
	checkOnce(t, h, "pulse", func(a *hub.Agent) record {
		return func(tx hub.Tx, n int, at time.Time) (bool, error) { return tx.RecordPulse(a.ID, int64(n), at) }
	})
}

// The beat counter's compare-and-set: a second handle that read the same
// value cannot move it again.
func testSwapMeta(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db, other := open(), open()
	swap := func(db hub.Store, old, value string, want bool) {
		t.Helper()
		mustUpdate(t, db, func(tx hub.Tx) error {
			got, err := tx.SwapMeta("beat", old, value)
			if err == nil && got != want {
				t.Errorf("SwapMeta(beat, %q, %q) = %v, want %v", old, value, got, want)
			}
			return err
		})
	}
	swap(db, "", "1", true)     // none stored yet
	swap(other, "", "1", false) // the double start
	swap(db, "1", "2", true)
	swap(other, "1", "2", false) // the double advance
	swap(other, "3", "4", false)
	mustView(t, other, func(tx hub.Tx) error {
		v, err := tx.Meta("beat")
		if v != "2" {
			t.Errorf("Meta(beat) = %q after the refused swaps, want 2", v)
		}
		return err
	})
}
