package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testPriorityRoundTrip: priority and ack_required come back from every
// read, in single and batched inserts; a message without a priority is
// stored as normal.
func testPriorityRoundTrip(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob := createAgent(t, db, "bob")
	urgent := &hub.Message{From: "alice", To: []string{"bob"}, Body: "now", Kind: hub.KindMessage, CreatedAt: t0, Priority: hub.PriorityUrgent, AckRequired: true}
	plain := &hub.Message{From: "orchestrator", To: []string{"bob"}, Body: "hi", Kind: hub.KindNudge, CreatedAt: t0}
	low := &hub.Message{From: "alice", To: []string{"bob"}, Body: "later", Kind: hub.KindMessage, CreatedAt: t0, Priority: hub.PriorityLow}
	d := []hub.Delivery{{AgentID: bob.ID}}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertMessage(urgent, d); err != nil {
			return err
		}
		return tx.InsertMessages([]*hub.Message{plain, low}, [][]hub.Delivery{d, d})
	})
	want := map[int64]struct {
		p   hub.Priority
		ack bool
	}{urgent.ID: {hub.PriorityUrgent, true}, plain.ID: {hub.PriorityNormal, false}, low.ID: {hub.PriorityLow, false}}
	mustView(t, db, func(tx hub.Tx) error {
		inbox, err := tx.Inbox(bob.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		listed, err := tx.ListMessages(hub.MessageQuery{Limit: 10})
		if err != nil {
			return err
		}
		one, err := tx.MessageByID(urgent.ID)
		if err != nil {
			return err
		}
		for _, m := range append(append(inbox, listed...), one) {
			w := want[m.ID]
			if m.Priority != w.p || m.AckRequired != w.ack {
				t.Errorf("message %d: priority %v ack %v, want %v %v", m.ID, m.Priority, m.AckRequired, w.p, w.ack)
			}
		}
		if len(inbox) != 3 || len(listed) != 3 {
			t.Errorf("inbox %d, listed %d messages, want 3 and 3", len(inbox), len(listed))
		}
		return nil
	})
}

// testReceipts: delivery marks are written once, acknowledgements once
// (and ENOTFOUND for a message not delivered to the agent), read times come
// from the first read mark at or above the message, and the receipts list
// every recipient by name.
func testReceipts(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol, dave := createAgent(t, db, "bob"), createAgent(t, db, "carol"), createAgent(t, db, "dave")
	m1 := insertMessage(t, db, "", []*hub.Agent{carol, bob}, bob)
	m2 := insertMessage(t, db, "", []*hub.Agent{bob})
	t1, t2, t3 := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)

	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkDelivered(bob.ID, []int64{m1, m2}, t1) })
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.MarkDelivered(bob.ID, []int64{m1}, t2) }) // kept: t1
	mustView(t, db, func(tx hub.Tx) error {
		ms, err := tx.Inbox(bob.ID, hub.InboxQuery{Limit: 10})
		if err != nil {
			return err
		}
		for _, m := range ms {
			if !m.Delivered {
				t.Errorf("bob's message %d: Delivered false after MarkDelivered", m.ID)
			}
		}
		ms, err = tx.Inbox(carol.ID, hub.InboxQuery{Limit: 10})
		if err == nil && (len(ms) != 1 || ms[0].Delivered) {
			t.Errorf("carol's inbox %v: want m1 not delivered", ids(ms))
		}
		return err
	})

	var at time.Time
	var first bool
	mustUpdate(t, db, func(tx hub.Tx) (err error) { at, first, err = tx.Acknowledge(carol.ID, m1, t2); return err })
	if !first || !at.Equal(t2) {
		t.Errorf("first ack: %v %v, want %v true", at, first, t2)
	}
	mustUpdate(t, db, func(tx hub.Tx) (err error) { at, first, err = tx.Acknowledge(carol.ID, m1, t3); return err })
	if first || !at.Equal(t2) {
		t.Errorf("second ack: %v %v, want %v false", at, first, t2)
	}
	err := db.Update(t.Context(), func(tx hub.Tx) error { _, _, err := tx.Acknowledge(dave.ID, m1, t3); return err })
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("ack of a message not delivered: %v, want ENOTFOUND", err)
	}

	// bob reads up to m1 at t2, then up to m2 at t3.
	bob.ReadUpTo = m1
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.UpdateAgent(bob); err != nil {
			return err
		}
		return tx.RecordRead(bob.ID, m1, t2)
	})
	check := func(msg int64, want []hub.Receipt) {
		t.Helper()
		mustView(t, db, func(tx hub.Tx) error {
			got, err := tx.Receipts(msg)
			if err != nil {
				return err
			}
			if len(got) != len(want) {
				t.Fatalf("receipts of %d: %+v, want %+v", msg, got, want)
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.Agent != w.Agent || g.Mention != w.Mention || g.Read != w.Read || !g.DeliveredAt.Equal(w.DeliveredAt) ||
					!g.ReadAt.Equal(w.ReadAt) || !g.AckedAt.Equal(w.AckedAt) {
					t.Errorf("receipt %d of %d: %+v, want %+v", i, msg, g, w)
				}
			}
			return nil
		})
	}
	check(m1, []hub.Receipt{
		{Agent: "bob", Mention: true, DeliveredAt: t1, Read: true, ReadAt: t2},
		{Agent: "carol", DeliveredAt: t2, AckedAt: t2}, // acknowledging delivers
	})
	check(m2, []hub.Receipt{{Agent: "bob", DeliveredAt: t1}})
	bob.ReadUpTo = m2
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.UpdateAgent(bob); err != nil {
			return err
		}
		return tx.RecordRead(bob.ID, m2, t3)
	})
	check(m1, []hub.Receipt{
		{Agent: "bob", Mention: true, DeliveredAt: t1, Read: true, ReadAt: t2},
		{Agent: "carol", DeliveredAt: t2, AckedAt: t2},
	})
	check(m2, []hub.Receipt{{Agent: "bob", DeliveredAt: t1, Read: true, ReadAt: t3}})
	check(m2+100, []hub.Receipt{})
}

// testOverdueAcks: only unacknowledged, not yet nudged deliveries of
// messages asking for an acknowledgement, created by the cutoff, to
// enabled agents; RecordAckNudges takes them out for good.
func testOverdueAcks(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol, off, deep := createAgent(t, db, "bob"), createAgent(t, db, "carol"), createAgent(t, db, "off"), createAgent(t, db, "deep")
	off.DisabledAt = t0
	deepEnds := t0.Add(2 * time.Hour)
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.UpdateAgent(off); err != nil {
			return err
		}
		return tx.InsertDeepWork(&hub.DeepWork{AgentID: deep.ID, Mode: hub.DeepWorkStrict, PlannedActivity: "x", StartedAt: t0,
			EndsAt: deepEnds, State: hub.DeepWorkActive})
	})
	post := func(at time.Time, ack bool, to ...*hub.Agent) int64 {
		m := &hub.Message{From: "alice", Body: "x", Kind: hub.KindMessage, CreatedAt: at, AckRequired: ack}
		var ds []hub.Delivery
		for _, a := range to {
			ds = append(ds, hub.Delivery{AgentID: a.ID})
		}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
		return m.ID
	}
	old := post(t0, true, bob, carol, off, deep)
	post(t0, false, bob) // no ack asked
	acked := post(t0, true, bob)
	fresh := post(t0.Add(time.Hour), true, bob) // not overdue at the cutoff
	mustUpdate(t, db, func(tx hub.Tx) error { _, _, err := tx.Acknowledge(bob.ID, acked, t0); return err })

	overdueAt := func(now time.Time) []hub.PendingAck {
		var ps []hub.PendingAck
		mustView(t, db, func(tx hub.Tx) (err error) { ps, err = tx.OverdueAcks(t0.Add(time.Minute), now, 10); return err })
		return ps
	}
	overdue := func() []hub.PendingAck { return overdueAt(t0.Add(time.Minute)) }
	ps := overdue() // deep is in strict deep work: not yet
	var got []string
	for _, p := range ps {
		got = append(got, p.Agent)
		if p.MessageID != old || p.From != "alice" || !p.CreatedAt.Equal(t0) {
			t.Errorf("pending %+v: want message %d from alice at %v", p, old, t0)
		}
	}
	if !slices.Equal(got, []string{"bob", "carol"}) {
		t.Fatalf("overdue for %v, want [bob carol] (fresh is %d)", got, fresh)
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RecordAckNudges(bob.ID, []int64{old}, t0) })
	if ps := overdue(); len(ps) != 1 || ps[0].Agent != "carol" {
		t.Errorf("after nudging bob: %+v, want carol only", ps)
	}
	if ps := overdueAt(deepEnds); len(ps) != 2 || ps[1].Agent != "deep" {
		t.Errorf("once deep work ended: %+v, want carol and deep", ps)
	}
	err := db.Update(t.Context(), func(tx hub.Tx) error { return tx.RecordAckNudges(bob.ID, []int64{old}, t0) })
	if err == nil {
		t.Error("recording the same nudge twice: no error")
	}
}
