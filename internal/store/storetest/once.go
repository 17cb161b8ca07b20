package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// record is RecordNudges of one nudge or RecordPulse of one agent, bound to a key.
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
			fresh, err := tx.RecordNudges(at, []hub.NudgeKey{{AgentID: a.ID, Episode: "quiet since 09:00", N: n}})
			if err != nil {
				return false, err
			}
			return fresh[0], nil
		}
	})
	// The same number in another episode is another nudge.
	db := fresh(t, h)
	ann := createAgent(t, db, "ann")
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, episode := range []string{"a", "b"} {
			if ok, err := tx.RecordNudges(t0, []hub.NudgeKey{{AgentID: ann.ID, Episode: episode, N: 1}}); err != nil || !ok[0] {
				t.Errorf("RecordNudges(episode %s, 1) = %v, %v; want [true]", episode, ok, err)
			}
		}
		return nil
	})
}

// A batch of nudges: each is recorded once, whatever else is in the batch;
// a batch larger than one statement's rows (SQLite writes 64 per
// statement) reports each key in its place.
func testRecordNudgesBatch(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db, other := open(), open()
	var agents []*hub.Agent
	for i := range 70 {
		agents = append(agents, createAgent(t, db, fmt.Sprintf("agent-%02d", i)))
	}
	keys := func(n int, from, to int) []hub.NudgeKey {
		var ks []hub.NudgeKey
		for _, a := range agents[from:to] {
			ks = append(ks, hub.NudgeKey{AgentID: a.ID, Episode: "quiet", N: n})
		}
		return ks
	}
	record := func(db hub.Store, at time.Time, ks []hub.NudgeKey) []bool {
		t.Helper()
		var got []bool
		mustUpdate(t, db, func(tx hub.Tx) (err error) {
			got, err = tx.RecordNudges(at, ks)
			return err
		})
		if len(got) != len(ks) {
			t.Fatalf("RecordNudges of %d keys returned %d results", len(ks), len(got))
		}
		return got
	}
	// Nudge 1 of the even agents first, then of all 70 through the other
	// handle: only the odd ones are new.
	var even []hub.NudgeKey
	for i, k := range keys(1, 0, 70) {
		if i%2 == 0 {
			even = append(even, k)
		}
	}
	for i, ok := range record(db, t0, even) {
		if !ok {
			t.Errorf("first nudge of %d: recorded = false, want true", even[i].AgentID)
		}
	}
	all := keys(1, 0, 70)
	for i, ok := range record(other, t0.Add(time.Second), all) {
		if want := i%2 == 1; ok != want {
			t.Errorf("nudge 1 of agent %d in a batch of 70 after the even ones: recorded = %v, want %v", all[i].AgentID, ok, want)
		}
	}
	if got := record(db, t0, nil); len(got) != 0 {
		t.Errorf("RecordNudges of no key = %v, want none", got)
	}
	// A day later nudge 2 of the first ten prunes their old records only.
	later := t0.Add(hub.SentKept + time.Minute)
	record(db, later, keys(2, 0, 10))
	for i, ok := range record(db, later, keys(1, 0, 20)) {
		if want := i < 10; ok != want {
			t.Errorf("nudge 1 of agent %d again after the prune: recorded = %v, want %v", agents[i].ID, ok, want)
		}
	}
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
