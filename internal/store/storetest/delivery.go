package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testInContext: a delivery moves to in context once, with its first path
// and time (a later mark changes nothing), which also delivers it when it
// was not; Inbox and Receipts show it; DeliveredTo names only the caller's
// deliveries.
func testInContext(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob, carol})
	m2 := insertMessage(t, db, "", []*hub.Agent{bob})
	m3 := insertMessage(t, db, "", []*hub.Agent{carol})
	t1, t2, t3 := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkDelivered(bob.ID, []int64{m2}, t1) })
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkInContext(bob.ID, []int64{m1, m2, m3}, t2, hub.ViaChannel) })
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkInContext(bob.ID, []int64{m1}, t3, hub.ViaHook) }) // kept: channel at t2
	mustView(t, db, func(tx hub.Tx) error {
		ms, err := tx.Inbox(bob.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		if len(ms) != 2 || !ms[0].InContext || !ms[1].InContext || !ms[0].Delivered {
			t.Errorf("bob's inbox = %d messages, in context %v; want 2, both in context and delivered", len(ms), ms)
		}
		cs, err := tx.Inbox(carol.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		for _, m := range cs {
			if m.InContext || m.Delivered {
				t.Errorf("carol's message %d: in context %v, delivered %v; want neither (marks of bob's)", m.ID, m.InContext, m.Delivered)
			}
		}
		rs, err := tx.Receipts(m1)
		if err != nil {
			return err
		}
		if len(rs) != 2 || rs[0].Agent != "bob" || !rs[0].InContextAt.Equal(t2) || rs[0].Via != hub.ViaChannel || !rs[0].DeliveredAt.Equal(t2) ||
			rs[0].State() != hub.StateInContext || rs[1].Via != 0 || !rs[1].InContextAt.IsZero() || rs[1].State() != hub.StateQueued {
			t.Errorf("receipts of %d = %+v; want bob in context through channel at t2 (delivered then), carol queued", m1, rs)
		}
		rs, err = tx.Receipts(m2)
		if err != nil {
			return err
		}
		if len(rs) != 1 || !rs[0].DeliveredAt.Equal(t1) || !rs[0].InContextAt.Equal(t2) {
			t.Errorf("receipts of %d = %+v; want delivered at t1 (kept), in context at t2", m2, rs)
		}
		got, err := tx.DeliveredTo(bob.ID, []int64{m1, m2, m3, m3 + 100})
		if err != nil {
			return err
		}
		slices.Sort(got)
		if !slices.Equal(got, []int64{m1, m2}) {
			t.Errorf("DeliveredTo(bob) = %v, want %v", got, []int64{m1, m2})
		}
		return nil
	})
}

// testHeldDigests: held deliveries are found once the agent is out of
// deep work (flexible: until it ends; strict: until its end passes), with
// whether they were taken in since; one already in context is not held;
// released ones are found no more.
func testHeldDigests(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol, dora := createAgent(t, db, "bob"), createAgent(t, db, "carol"), createAgent(t, db, "dora")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob, carol, dora})
	m2 := insertMessage(t, db, "", []*hub.Agent{bob, carol})
	m3 := insertMessage(t, db, "", []*hub.Agent{bob})
	now := t0.Add(time.Hour)
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.MarkInContext(bob.ID, []int64{m3}, t0, hub.ViaWait); err != nil {
			return err
		}
		for _, a := range []*hub.Agent{bob, carol, dora} {
			if err := tx.HoldDeliveries(a.ID, []int64{m1, m2, m3}); err != nil {
				return err
			}
		}
		if err := tx.MarkInContext(bob.ID, []int64{m2}, t0, hub.ViaRead); err != nil { // taken in since
			return err
		}
		// carol in flexible deep work; dora's strict one ended before now.
		if err := tx.InsertDeepWork(&hub.DeepWork{AgentID: carol.ID, Mode: hub.DeepWorkFlexible, PlannedActivity: "x", StartedAt: t0, State: hub.DeepWorkActive}); err != nil {
			return err
		}
		return tx.InsertDeepWork(&hub.DeepWork{AgentID: dora.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "y", StartedAt: t0, EndsAt: now.Add(-time.Minute), State: hub.DeepWorkActive})
	})
	type held struct {
		agent string
		id    int64
		taken bool
	}
	due := func() []held {
		var out []held
		mustView(t, db, func(tx hub.Tx) error {
			hs, err := tx.HeldDue(now, 100)
			for _, h := range hs {
				out = append(out, held{h.Agent, h.MessageID, h.Taken})
				if h.From != "alice" || h.Body != "hello" {
					t.Errorf("held message %d: from %q body %q, want alice and hello", h.MessageID, h.From, h.Body)
				}
			}
			return err
		})
		return out
	}
	want := []held{{"bob", m1, false}, {"bob", m2, true}, {"dora", m1, false}}
	if got := due(); !slices.Equal(got, want) {
		t.Fatalf("HeldDue = %v, want %v (m3 was in bob's context before the hold; carol is in deep work)", got, want)
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.ReleaseHeld(bob.ID, []int64{m1, m2}) })
	if got := due(); !slices.Equal(got, want[2:]) {
		t.Fatalf("HeldDue after releasing bob's = %v, want %v", got, want[2:])
	}
}

// testPaths: a path row replaces the stored one of the same replica, or
// one that runs out sooner or has run out; last-seen only moves forward;
// rows of unknown agents are skipped; PathsSince returns what was written
// after a stamp it gave (the store's write time), but for the rows of the
// replica it is told to leave out, and the newest stamp of all.
func testPaths(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob := createAgent(t, db, "bob")
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	put := func(now time.Time, rows ...hub.PathRow) {
		t.Helper()
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutPaths(rows, now) })
	}
	var mark time.Time // the newest stamp read
	get := func(since time.Time) []hub.PathRow {
		t.Helper()
		var rows []hub.PathRow
		var newest time.Time
		mustView(t, db, func(tx hub.Tx) (err error) { rows, newest, err = tx.PathsSince(since, ""); return err })
		for i, r := range rows {
			if r.WrittenAt.IsZero() || r.WrittenAt.Before(since) {
				t.Errorf("row %+v stamped %v, read since %v", r, r.WrittenAt, since)
			}
			if r.WrittenAt.After(mark) {
				mark = r.WrittenAt
			}
			rows[i].WrittenAt = time.Time{}
		}
		if len(rows) > 0 && !newest.Equal(mark) {
			t.Errorf("newest stamp %v, want %v (the newest row's)", newest, mark)
		}
		return rows
	}
	row := func(via hub.Via, seen, until int, replica string) hub.PathRow {
		return hub.PathRow{AgentID: bob.ID, Via: via, LastSeenAt: at(seen), LiveUntil: at(until), Replica: replica}
	}
	put(at(10), row(hub.ViaWait, 10, 130, "a"), hub.PathRow{AgentID: bob.ID + 1000, Via: hub.ViaWait, LastSeenAt: at(10), LiveUntil: at(20), Replica: "a"})
	put(at(20), row(hub.ViaWait, 20, 25, "b"))  // b's path ends sooner than a's open one: a's stays
	put(at(30), row(hub.ViaHook, 30, 330, "b")) // another path
	if got, want := get(time.Time{}), []hub.PathRow{row(hub.ViaWait, 20, 130, "a"), row(hub.ViaHook, 30, 330, "b")}; !slices.Equal(got, want) {
		t.Fatalf("paths = %v, want %v", got, want)
	}
	since := mark
	put(at(40), row(hub.ViaWait, 40, 40, "a"))  // a's own row: replaced (a closed it)
	put(at(50), row(hub.ViaWait, 15, 200, "b")) // lives longer: replaces, last seen kept
	if got, want := get(since), []hub.PathRow{row(hub.ViaWait, 40, 200, "b")}; !slices.Equal(got, want) {
		t.Fatalf("paths written since the first read = %v, want %v", got, want)
	}
	since = mark
	put(at(300), row(hub.ViaWait, 300, 305, "a")) // b's ran out at 200: replaced
	if got, want := get(since), []hub.PathRow{row(hub.ViaWait, 300, 305, "a")}; !slices.Equal(got, want) {
		t.Fatalf("paths written since the second read = %v, want %v", got, want)
	}
	// Replica a reads only b's rows, and the newest stamp of all, its own included.
	var rows []hub.PathRow
	var newest time.Time
	mustView(t, db, func(tx hub.Tx) (err error) { rows, newest, err = tx.PathsSince(time.Time{}, "a"); return err })
	if len(rows) != 1 || rows[0].Replica != "b" || rows[0].Via != hub.ViaHook || !newest.Equal(mark) {
		t.Errorf("PathsSince(every row, except a) = %v, newest %v; want b's hook path, newest %v", rows, newest, mark)
	}
}

// testRetirement: candidates are the enabled agents not retired, silent
// (or, never seen, created) before the cutoff, holding no reservation in
// force and no claimed task, the longest silent first; retiring is conditional; a retired
// agent comes back once its stored last call is after its retirement; an
// agent's retirement and session end come back with it.
func testRetirement(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	old, never, recent, held, disabled := createAgent(t, db, "old"), createAgent(t, db, "never"), createAgent(t, db, "recent"), createAgent(t, db, "held"), createAgent(t, db, "off")
	worker := createAgent(t, db, "worker")
	day := 24 * time.Hour
	now := t0.Add(30 * day)
	cutoff := now.Add(-7 * day)
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.TouchAgents([]hub.Touch{
			{AgentID: old.ID, LastSeenAt: t0.Add(day), SessionEndedAt: t0.Add(day)},
			{AgentID: recent.ID, LastSeenAt: now.Add(-day)},
			{AgentID: held.ID, LastSeenAt: t0.Add(2 * day)},
			{AgentID: disabled.ID, LastSeenAt: t0},
			{AgentID: worker.ID, LastSeenAt: t0},
		}); err != nil {
			return err
		}
		if err := tx.InsertTask(&hub.Task{Project: hub.DefaultProject, Title: "long job", State: hub.TaskClaimed, Priority: hub.PriorityNormal,
			Creator: worker.Name, CreatorID: worker.ID, AssigneeID: worker.ID, CreatedAt: t0, ClaimedAt: t0, UpdatedAt: t0, LeaseDue: now.Add(time.Hour)}); err != nil {
			return err
		}
		if err := tx.InsertReservations([]*hub.Reservation{{AgentID: held.ID, Pattern: "src/", Mode: hub.ReservationExclusive, CreatedAt: t0, ExpiresAt: now.Add(time.Hour)}}); err != nil {
			return err
		}
		a, err := tx.AgentByID(disabled.ID)
		if err != nil {
			return err
		}
		a.DisabledAt = t0
		return tx.UpdateAgent(a)
	})
	var names []string
	mustView(t, db, func(tx hub.Tx) error {
		cs, err := tx.RetireCandidates(cutoff, now, 10)
		for _, c := range cs {
			names = append(names, c.Name)
		}
		return err
	})
	if want := []string{"never", "old"}; !slices.Equal(names, want) {
		t.Fatalf("retirement candidates = %v, want %v (never seen first, then the longest silent)", names, want)
	}
	var done []int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		done, err = tx.RetireAgents([]int64{old.ID, never.ID, recent.ID}, cutoff, now)
		return err
	})
	slices.Sort(done)
	if want := []int64{old.ID, never.ID}; !slices.Equal(done, want) {
		t.Fatalf("retired %v, want %v (recent called after the cutoff)", done, want)
	}
	mustView(t, db, func(tx hub.Tx) error {
		a, err := tx.AgentByID(old.ID)
		if err == nil && (!a.RetiredAt.Equal(now) || !a.SessionEndedAt.Equal(t0.Add(day))) {
			t.Errorf("old: retired %v, session ended %v; want %v and %v", a.RetiredAt, a.SessionEndedAt, now, t0.Add(day))
		}
		cs, err2 := tx.RetireCandidates(cutoff, now, 10)
		if len(cs) != 0 {
			t.Errorf("candidates after retiring = %v, want none", cs)
		}
		return errors.Join(err, err2)
	})
	var back []int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if err := tx.TouchAgents([]hub.Touch{{AgentID: old.ID, LastSeenAt: now.Add(time.Minute)}}); err != nil {
			return err
		}
		back, err = tx.ReturnAgents([]int64{old.ID, never.ID, recent.ID})
		return err
	})
	if !slices.Equal(back, []int64{old.ID}) {
		t.Fatalf("returned %v, want only old (it called after its retirement)", back)
	}
	mustView(t, db, func(tx hub.Tx) error {
		a, err := tx.AgentByID(old.ID)
		if err == nil && !a.RetiredAt.IsZero() {
			t.Errorf("old after its return: retired %v, want zero", a.RetiredAt)
		}
		n, err2 := tx.AgentByID(never.ID)
		if err2 == nil && !n.RetiredAt.Equal(now) {
			t.Errorf("never: retired %v, want %v", n.RetiredAt, now)
		}
		return errors.Join(err, err2)
	})
}

// testNotices: notice counts round-trip per agent; QueuedDue returns the
// urgent and ack_required messages old enough and not looked at, oldest
// first, until MarkQueueChecked.
func testNotices(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	w := t0.Truncate(time.Hour)
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.PutNoticeCounts(map[int64]hub.NoticeCount{bob.ID: {Window: w, Sent: 2}, carol.ID: {Window: w, Sent: 1}})
	})
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.PutNoticeCounts(map[int64]hub.NoticeCount{bob.ID: {Window: w.Add(time.Hour), Sent: 1}})
	})
	mustView(t, db, func(tx hub.Tx) error {
		cs, err := tx.NoticeCounts([]int64{bob.ID, carol.ID, carol.ID + 100})
		if len(cs) != 2 || cs[bob.ID].Sent != 1 || !cs[bob.ID].Window.Equal(w.Add(time.Hour)) || cs[carol.ID].Sent != 1 || !cs[carol.ID].Window.Equal(w) {
			t.Errorf("notice counts = %v", cs)
		}
		return err
	})
	d := []hub.Delivery{{AgentID: bob.ID}}
	msg := func(p hub.Priority, ack bool, at time.Time) *hub.Message {
		return &hub.Message{From: "carol", To: []string{"bob"}, Body: "x", Kind: hub.KindMessage, CreatedAt: at, Priority: p, AckRequired: ack}
	}
	urgent, acked, plain, late := msg(hub.PriorityUrgent, false, t0), msg(hub.PriorityNormal, true, t0), msg(hub.PriorityHigh, false, t0), msg(hub.PriorityUrgent, false, t0.Add(time.Hour))
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertMessages([]*hub.Message{urgent, acked, plain, late}, [][]hub.Delivery{d, d, d, d})
	})
	due := func() []int64 {
		var out []int64
		mustView(t, db, func(tx hub.Tx) error {
			ms, err := tx.QueuedDue(t0.Add(time.Minute), 10)
			out = ids(ms)
			return err
		})
		return out
	}
	if got, want := due(), []int64{urgent.ID, acked.ID}; !slices.Equal(got, want) {
		t.Fatalf("QueuedDue = %v, want %v (urgent and ack_required, old enough)", got, want)
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkQueueChecked([]int64{urgent.ID}) })
	if got, want := due(), []int64{acked.ID}; !slices.Equal(got, want) {
		t.Fatalf("QueuedDue after checking %d = %v, want %v", urgent.ID, got, want)
	}
}
