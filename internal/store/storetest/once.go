package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// record is RecordPulse of one agent, bound to a key.
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

// claimTo runs ClaimNudges of cs through db and returns what it reported.
func claimTo(t *testing.T, db hub.Store, cs []hub.NudgeClaim) []bool {
	t.Helper()
	var got []bool
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		got, err = tx.ClaimNudges(cs)
		return err
	})
	if len(got) != len(cs) {
		t.Fatalf("ClaimNudges of %d checks returned %d results", len(cs), len(got))
	}
	return got
}

// storedCheck reads a's check through db.
func storedCheck(t *testing.T, db hub.Store, a *hub.Agent) hub.AgentCheck {
	t.Helper()
	var c hub.AgentCheck
	mustView(t, db, func(tx hub.Tx) (err error) {
		c, err = tx.AgentCheck(a.ID)
		return err
	})
	return c
}

// nudged is check c after its nth nudge of episode at at.
func nudged(c hub.AgentCheck, episode string, n int, at time.Time) hub.AgentCheck {
	c.Episode, c.NudgeCount, c.LastNudgeAt, c.NextCheckAt = episode, n, at, at.Add(time.Hour)
	return c
}

// A nudge is claimed once: a second handle that decided the same nudge
// from the same check (a stale orchestrator on another replica) is refused
// and writes nothing, also when the check went back to the same episode
// and count meanwhile (the episode ended and started again); the next
// nudge decided from the stored check is claimed; another agent's claim
// is its own; an agent without a check row claims nothing.
func testClaimNudgeOnce(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db, other := open(), open()
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	start := hub.AgentCheck{AgentID: ann.ID, NextCheckAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.PutAgentChecks([]hub.AgentCheck{start, {AgentID: bob.ID, NextCheckAt: t0}})
	})
	try := func(db hub.Store, c, was hub.AgentCheck, want bool) {
		t.Helper()
		if got := claimTo(t, db, []hub.NudgeClaim{{Check: c, Was: was}})[0]; got != want {
			t.Errorf("claim %s #%d of agent %d from %s #%d: %v, want %v", c.Episode, c.NudgeCount, c.AgentID, was.Episode, was.NudgeCount, got, want)
		}
	}
	first := nudged(start, "quiet", 1, t0)
	try(db, first, start, true)
	try(other, nudged(start, "quiet", 1, t0.Add(time.Second)), start, false) // the double
	if got := storedCheck(t, db, ann); got != first {
		t.Errorf("after the double, ann's check = %+v, want the first claim's %+v", got, first)
	}
	try(other, nudged(start, "other", 1, t0), start, false) // any nudge decided from a stale check
	second := nudged(first, "quiet", 2, t0.Add(time.Minute))
	try(other, second, first, true)
	try(db, second, first, false)
	// The episode ends (the agent acted), then comes back to the same
	// name: a nudge decided from the first check is still refused.
	ended := second
	ended.Episode, ended.NudgeCount = "", 0
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutAgentCheck(ended) })
	try(other, first, start, false)
	try(db, nudged(ended, "quiet", 1, t0.Add(2*time.Minute)), ended, true)
	try(other, nudged(hub.AgentCheck{AgentID: bob.ID, NextCheckAt: t0}, "quiet", 1, t0), hub.AgentCheck{AgentID: bob.ID, NextCheckAt: t0}, true)
	cat := createAgent(t, db, "cat")
	try(db, nudged(hub.AgentCheck{AgentID: cat.ID}, "quiet", 1, t0), hub.AgentCheck{AgentID: cat.ID}, false)
	if c := storedCheck(t, db, cat); c.NudgeCount != 0 {
		t.Errorf("cat's check after a refused claim = %+v, want none stored", c)
	}
}

// A batch of claims: each is decided on its own, whatever else is in the
// batch; a batch larger than one statement's rows (SQLite writes 100 per
// statement) reports each claim in its place.
func testClaimNudgesBatch(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db, other := open(), open()
	var starts []hub.AgentCheck
	for i := range 130 {
		starts = append(starts, hub.AgentCheck{AgentID: createAgent(t, db, fmt.Sprintf("agent-%02d", i)).ID, NextCheckAt: t0})
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutAgentChecks(starts) })
	claims := func(at time.Time, keep func(i int) bool) []hub.NudgeClaim {
		var cs []hub.NudgeClaim
		for i, c := range starts {
			if keep(i) {
				cs = append(cs, hub.NudgeClaim{Check: nudged(c, "quiet", 1, at), Was: c})
			}
		}
		return cs
	}
	even := claims(t0, func(i int) bool { return i%2 == 0 })
	for i, ok := range claimTo(t, db, even) {
		if !ok {
			t.Errorf("first nudge of %d: claimed = false, want true", even[i].Check.AgentID)
		}
	}
	all := claims(t0.Add(time.Second), func(int) bool { return true })
	for i, ok := range claimTo(t, other, all) {
		if want := i%2 == 1; ok != want {
			t.Errorf("nudge 1 of agent %d in a batch of 130 after the even ones: claimed = %v, want %v", all[i].Check.AgentID, ok, want)
		}
	}
	if got := claimTo(t, db, nil); len(got) != 0 {
		t.Errorf("ClaimNudges of no check = %v, want none", got)
	}
}

// An agent's notice count is kept with its nudge check: a claimed nudge
// stores the count it was given (a refused one stores nothing), the due
// checks and AgentCheck read it back, PutAgentChecks leaves it as stored,
// and NoticeCounts and PutNoticeCounts read and write the same count.
func testNoticeCountInCheck(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann := createAgent(t, db, "ann")
	w := t0.Truncate(time.Hour)
	start := hub.AgentCheck{AgentID: ann.ID, NextCheckAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutAgentChecks([]hub.AgentCheck{start}) })
	first := nudged(start, "quiet", 1, t0)
	first.Notices = hub.NoticeCount{Window: w, Sent: 1}
	if !claimTo(t, db, []hub.NudgeClaim{{Check: first, Was: start}})[0] {
		t.Fatal("first nudge not claimed")
	}
	stale := nudged(start, "quiet", 1, t0)
	stale.Notices = hub.NoticeCount{Window: w, Sent: 5}
	if claimTo(t, db, []hub.NudgeClaim{{Check: stale, Was: start}})[0] {
		t.Error("a nudge decided from a stale check was claimed")
	}
	sent := func(what string, want int) {
		t.Helper()
		c := storedCheck(t, db, ann)
		var due []hub.DueNudge
		var counts map[int64]hub.NoticeCount
		mustView(t, db, func(tx hub.Tx) (err error) {
			if due, err = tx.DueNudges(t0.Add(48*time.Hour), 10, nil); err != nil {
				return err
			}
			counts, err = tx.NoticeCounts([]int64{ann.ID})
			return err
		})
		if c.Notices.Sent != want || !c.Notices.Window.Equal(w) {
			t.Errorf("%s: ann's check has notice count %+v, want %d in the hour of %s", what, c.Notices, want, w)
		}
		if len(due) != 1 || due[0].Check.Notices != c.Notices {
			t.Errorf("%s: due checks %+v, want ann's with the notice count %+v", what, due, c.Notices)
		}
		if counts[ann.ID] != c.Notices {
			t.Errorf("%s: NoticeCounts = %+v, want %+v", what, counts, c.Notices)
		}
	}
	sent("after the claim", 1)
	later := first
	later.NextCheckAt, later.Notices = t0.Add(time.Hour), hub.NoticeCount{}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutAgentChecks([]hub.AgentCheck{later}) })
	sent("after PutAgentChecks", 1)
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.PutNoticeCounts(map[int64]hub.NoticeCount{ann.ID: {Window: w, Sent: 3}})
	})
	sent("after PutNoticeCounts", 3)
	if c := storedCheck(t, db, ann); c.Episode != "quiet" || c.NudgeCount != 1 || !c.NextCheckAt.Equal(later.NextCheckAt) {
		t.Errorf("PutNoticeCounts changed ann's check: %+v", c)
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
