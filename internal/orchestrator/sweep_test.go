package orchestrator_test

import (
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestTickBatchFallsBackPerAgent: the health sweep and the nudge checks
// handle their due agents in one batch; when the batch fails (here one
// agent's state names a deep work declaration that does not exist), they
// go on one agent at a time, so the others are still evaluated and nudged
// and the tick reports the broken agent.
func TestTickBatchFallsBackPerAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.agent("claude")
	r.agent("broken")
	r.agent("gemini")
	r.tick()
	raw, err := sql.Open("sqlite3", "file:"+r.path+"?vfs=unix-excl&_busy_timeout=5000") // the store's VFS: the file is this process's alone
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE liveness SET active_deep_work_id = 424242 WHERE agent_id = (SELECT id FROM agents WHERE name = 'broken')`); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(10 * time.Minute)
	err = r.o.Tick(r.ctx, r.clock.Now())
	if err == nil || !contains(err.Error(), "health of broken") {
		t.Errorf("Tick error = %v, want one naming the broken agent's health", err)
	}
	rep := r.o.Stats().Last
	if rep.Evaluated != 2 || rep.Nudged != 2 {
		t.Errorf("report: evaluated %d, nudged %d; want 2 and 2 (all but the broken agent)", rep.Evaluated, rep.Nudged)
	}
	for _, name := range []string{"claude", "gemini"} {
		if n := len(r.events(name, string(hub.EventHealthChanged))); n != 1 {
			t.Errorf("%s: %d health events, want 1", name, n)
		}
		if n := len(r.events(name, string(hub.EventNudge))); n != 1 {
			t.Errorf("%s: %d nudge events, want 1", name, n)
		}
	}
	if n := len(r.events("broken", "")); n != 0 {
		t.Errorf("broken: %d events, want none", n)
	}
}

// TestTickFailedMentionScanHoldsNoSweep: a mention scan that fails (here
// an unreadable cursor) is reported, and the health sweep and the nudges
// already due still run in the same tick.
func TestTickFailedMentionScanHoldsNoSweep(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.agent("claude")
	r.tick()
	raw, err := sql.Open("sqlite3", "file:"+r.path+"?vfs=unix-excl&_busy_timeout=5000") // the store's VFS: the file is this process's alone
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE meta SET value = 'not a number' WHERE key = 'nudge_mention_cursor'`); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(10 * time.Minute)
	err = r.o.Tick(r.ctx, r.clock.Now())
	if err == nil || !contains(err.Error(), "nudge_mention_cursor") {
		t.Errorf("Tick error = %v, want one naming the unreadable mention cursor", err)
	}
	if rep := r.o.Stats().Last; rep.Evaluated != 1 || rep.Nudged != 1 {
		t.Errorf("report: evaluated %d, nudged %d; want 1 and 1 despite the failed scan", rep.Evaluated, rep.Nudged)
	}
	if n := len(r.events("claude", string(hub.EventNudge))); n != 1 {
		t.Errorf("claude: %d nudge events, want 1", n)
	}
}

// TestTickMentionScanSkipsNudges: the mention scan's cursor moves past the
// nudges (which are not mentions to schedule), so a tick does not read
// again every nudge posted since the last human mention; a mention posted
// afterwards is still found.
func TestTickMentionScanSkipsNudges(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, ta := r.agent("claude")
	_, tb := r.agent("gemini")
	r.tick()
	r.clock.Advance(10 * time.Minute)
	if rep := r.tick(); rep.Nudged != 2 {
		t.Fatalf("nudged %d agents at the inactivity timeout, want 2", rep.Nudged)
	}
	r.clock.Advance(5 * time.Second)
	r.tick()
	cursor := func() (cur, top int64) {
		t.Helper()
		err := r.db.View(r.ctx, func(tx hub.Tx) error {
			v, err := tx.Meta("nudge_mention_cursor")
			if err != nil {
				return err
			}
			if cur, err = strconv.ParseInt(v, 10, 64); err != nil {
				return err
			}
			top, err = tx.MaxMessageID()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return cur, top
	}
	if cur, top := cursor(); cur != top {
		t.Errorf("mention cursor = %d after the nudges, want the newest message %d", cur, top)
	}

	// claude acts; gemini mentions it; 10 minutes later claude is nudged
	// about the mention, not about inactivity.
	r.checkpoint(ta)
	if _, err := r.svc.Messages.Post(r.ctx, r.call(tb), "", hub.PostRequest{To: []string{"claude"}, Body: "@claude ping"}); err != nil {
		t.Fatal(err)
	}
	r.run(9*time.Minute, 5*time.Second)
	r.checkpoint(ta)
	r.run(time.Minute, 5*time.Second)
	ns := r.inbox(ta, hub.KindNudge)
	if len(ns) != 2 || !contains(ns[1].Body, "1 unread mention") || contains(ns[1].Body, "no activity") {
		t.Errorf("nudges = %d, last %+v; want a second one about the mention", len(ns), ns[len(ns)-1])
	}
}
