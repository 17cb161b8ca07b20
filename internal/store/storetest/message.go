package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// insertMessage stores a message from alice delivered to the given agents
// (mention true for those in mention) and returns its ID.
func insertMessage(tb testing.TB, db hub.Store, channel string, to []*hub.Agent, mention ...*hub.Agent) int64 {
	tb.Helper()
	m := &hub.Message{From: "alice", Channel: channel, Body: "hello", Kind: hub.KindMessage, CreatedAt: t0}
	var ds []hub.Delivery
	for _, a := range to {
		ds = append(ds, hub.Delivery{AgentID: a.ID, Mention: slices.Contains(mention, a)})
		m.To = append(m.To, a.Name)
	}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
	return m.ID
}

func ids(ms []*hub.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func testInbox(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob})
	m2 := insertMessage(t, db, "", []*hub.Agent{carol})
	m3 := insertMessage(t, db, "#ops", []*hub.Agent{bob, carol}, bob)
	m4 := insertMessage(t, db, "", []*hub.Agent{bob}, bob)

	tests := []struct {
		name    string
		agent   *hub.Agent
		q       hub.InboxQuery
		want    []int64
		unread  []bool
		mention []bool
	}{
		{"all of bob", bob, hub.InboxQuery{Limit: 10}, []int64{m1, m3, m4}, []bool{true, true, true}, []bool{false, true, true}},
		{"after", bob, hub.InboxQuery{After: m1, Limit: 10}, []int64{m3, m4}, nil, nil},
		{"limit", bob, hub.InboxQuery{Limit: 2}, []int64{m1, m3}, nil, nil},
		{"channel", bob, hub.InboxQuery{Channel: "#ops", Limit: 10}, []int64{m3}, nil, nil},
		{"read state", bob, hub.InboxQuery{Limit: 10, ReadUpTo: m3}, []int64{m1, m3, m4}, []bool{false, false, true}, nil},
		{"carol", carol, hub.InboxQuery{Limit: 10}, []int64{m2, m3}, nil, []bool{false, false}},
		{"nothing after", carol, hub.InboxQuery{After: m4, Limit: 10}, []int64{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mustView(t, db, func(tx hub.Tx) error {
				ms, err := tx.Inbox(tt.agent.ID, tt.q)
				if err != nil {
					return err
				}
				if got := ids(ms); !slices.Equal(got, tt.want) {
					t.Errorf("IDs = %v, want %v", got, tt.want)
				}
				for i, m := range ms {
					if tt.unread != nil && m.Unread != tt.unread[i] {
						t.Errorf("message %d: Unread = %v, want %v", m.ID, m.Unread, tt.unread[i])
					}
					if tt.mention != nil && m.MentionsYou != tt.mention[i] {
						t.Errorf("message %d: MentionsYou = %v, want %v", m.ID, m.MentionsYou, tt.mention[i])
					}
				}
				return nil
			})
		})
	}
}

// testLookInbox: a wait's look reads the messages after a cursor, or
// after the agent's read cursor, Unread by that cursor; without messages
// the newest delivered; of a disabled agent, nothing but that it is.
func testLookInbox(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob})
	m2 := insertMessage(t, db, "#ops", []*hub.Agent{bob, carol}, bob)
	m3 := insertMessage(t, db, "", []*hub.Agent{bob})
	mustUpdate(t, db, func(tx hub.Tx) error {
		bob.ReadUpTo = m1
		return tx.UpdateAgent(bob)
	})
	tests := []struct {
		name           string
		agent          *hub.Agent
		after          int64
		fromReadCursor bool
		limit          int
		want           hub.InboxLook
		unread         []bool
	}{
		{"after a cursor", bob, 0, false, 10, hub.InboxLook{From: 0}, []bool{false, true, true}},
		{"after the read cursor", bob, 0, true, 10, hub.InboxLook{From: m1}, []bool{true, true}},
		{"a page", bob, m1, false, 1, hub.InboxLook{From: m1}, []bool{true}},
		{"nothing after a cursor", bob, m3, false, 10, hub.InboxLook{From: m3, Latest: m3}, nil},
		{"carol's, after her read cursor", carol, 0, true, 10, hub.InboxLook{From: 0}, []bool{true}},
	}
	want := map[string][]int64{"after a cursor": {m1, m2, m3}, "after the read cursor": {m2, m3}, "a page": {m2},
		"nothing after a cursor": {}, "carol's, after her read cursor": {m2}}
	for _, tt := range tests {
		mustView(t, db, func(tx hub.Tx) error {
			lk, err := tx.LookInbox(tt.agent.ID, tt.after, tt.fromReadCursor, tt.limit)
			if err != nil {
				return err
			}
			if got := ids(lk.Messages); !slices.Equal(got, want[tt.name]) || lk.From != tt.want.From || lk.Latest != tt.want.Latest || lk.Disabled {
				t.Errorf("%s: look = %v from %d, latest %d, disabled %v; want %v from %d, latest %d", tt.name, got, lk.From, lk.Latest, lk.Disabled,
					want[tt.name], tt.want.From, tt.want.Latest)
			}
			for i, m := range lk.Messages {
				if m.Unread != tt.unread[i] || m.MentionsYou != (tt.agent == bob && m.ID == m2) {
					t.Errorf("%s: message %d: Unread %v, MentionsYou %v", tt.name, m.ID, m.Unread, m.MentionsYou)
				}
			}
			return nil
		})
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		bob.DisabledAt = t0
		return tx.UpdateAgent(bob)
	})
	mustView(t, db, func(tx hub.Tx) error {
		for _, fromReadCursor := range []bool{false, true} {
			lk, err := tx.LookInbox(bob.ID, 0, fromReadCursor, 10)
			if err != nil || !lk.Disabled || len(lk.Messages) != 0 {
				t.Errorf("disabled bob's look = %+v, %v; want disabled and nothing else", lk, err)
			}
		}
		if _, err := tx.LookInbox(9999, 0, true, 10); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("an unknown agent's look: %v, want ENOTFOUND", err)
		}
		return nil
	})
}

func testInboxCounts(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	mustView(t, db, func(tx hub.Tx) error {
		u, m, l, err := tx.InboxCounts(bob.ID, 0)
		if u != 0 || m != 0 || l != 0 {
			t.Errorf("empty inbox: counts %d %d %d, want 0 0 0", u, m, l)
		}
		return err
	})
	m1 := insertMessage(t, db, "", []*hub.Agent{bob}, bob)
	m2 := insertMessage(t, db, "", []*hub.Agent{bob})
	m3 := insertMessage(t, db, "", []*hub.Agent{carol})
	tests := []struct {
		agent                    *hub.Agent
		after                    int64
		unread, mentions, latest int64
	}{
		{bob, 0, 2, 1, m2},
		{bob, m1, 1, 0, m2},
		{bob, m2, 0, 0, m2}, // nothing above: latest is still the newest delivered
		{bob, m3, 0, 0, m2},
		{carol, 0, 1, 0, m3},
	}
	for _, tt := range tests {
		mustView(t, db, func(tx hub.Tx) error {
			u, m, l, err := tx.InboxCounts(tt.agent.ID, tt.after)
			if u != tt.unread || m != tt.mentions || l != tt.latest {
				t.Errorf("InboxCounts(%s, %d) = %d, %d, %d; want %d, %d, %d", tt.agent.Name, tt.after, u, m, l, tt.unread, tt.mentions, tt.latest)
			}
			return err
		})
	}
}

func testListMessagesAndRecipients(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob})
	m2 := insertMessage(t, db, "#ops", []*hub.Agent{carol})
	m3 := insertMessage(t, db, "", []*hub.Agent{bob, carol})
	m4 := insertMessage(t, db, "", nil) // no deliveries (an empty channel)
	tests := []struct {
		q    hub.MessageQuery
		want []int64
	}{
		{hub.MessageQuery{Limit: 10}, []int64{m1, m2, m3, m4}},
		{hub.MessageQuery{After: m2, Limit: 10}, []int64{m3, m4}},
		{hub.MessageQuery{Limit: 2}, []int64{m1, m2}},
		{hub.MessageQuery{AgentID: bob.ID, Limit: 10}, []int64{m1, m3}},
		{hub.MessageQuery{AgentID: carol.ID, After: m2, Limit: 10}, []int64{m3}},
		{hub.MessageQuery{Channel: "#ops", Limit: 10}, []int64{m2}},
		{hub.MessageQuery{Newest: true, Limit: 2}, []int64{m3, m4}},
		{hub.MessageQuery{Newest: true, AgentID: bob.ID, Limit: 1}, []int64{m3}},
		{hub.MessageQuery{Newest: true, After: m2, Limit: 10}, []int64{m3, m4}},
	}
	for _, tt := range tests {
		mustView(t, db, func(tx hub.Tx) error {
			ms, err := tx.ListMessages(tt.q)
			if got := ids(ms); !slices.Equal(got, tt.want) {
				t.Errorf("ListMessages(%+v) = %v, want %v", tt.q, got, tt.want)
			}
			return err
		})
	}
	mustView(t, db, func(tx hub.Tx) error {
		max, err := tx.MaxMessageID()
		if err != nil {
			return err
		}
		if max != m4 {
			t.Errorf("MaxMessageID = %d, want %d", max, m4)
		}
		for _, tt := range []struct {
			after int64
			want  []int64
		}{{0, []int64{bob.ID, carol.ID}}, {m1, []int64{bob.ID, carol.ID}}, {m2, []int64{bob.ID, carol.ID}}, {m3, nil}} {
			got, err := tx.RecipientsAfter(tt.after)
			if err != nil {
				return err
			}
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("RecipientsAfter(%d) = %v, want %v", tt.after, got, tt.want)
			}
		}
		return nil
	})
}

func testChannels(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	alice, bob, carol := createAgent(t, db, "alice"), createAgent(t, db, "bob"), createAgent(t, db, "carol")
	var ops int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if ops, err = tx.EnsureChannel(hub.DefaultProject, "#ops", t0); err != nil {
			return err
		}
		again, err := tx.EnsureChannel(hub.DefaultProject, "#ops", t0)
		if again != ops {
			t.Errorf("EnsureChannel twice: IDs %d and %d, want the same", ops, again)
		}
		for _, a := range []*hub.Agent{carol, alice, bob, alice} { // joining twice is a no-op
			if err := tx.InsertChannelMember(ops, a.ID, t0); err != nil {
				return err
			}
		}
		if err := tx.DeleteChannelMember(ops, bob.ID); err != nil {
			return err
		}
		if err := tx.DeleteChannelMember(ops, bob.ID); err != nil { // leaving twice too
			return err
		}
		carol.DisabledAt = t0
		return tx.UpdateAgent(carol)
	})
	mustView(t, db, func(tx hub.Tx) error {
		members, err := tx.ChannelMembers(ops)
		if err != nil {
			return err
		}
		if got, want := fmt.Sprint(members), fmt.Sprint([]int64{alice.ID}); got != want {
			t.Errorf("ChannelMembers = %s, want %s (disabled carol and departed bob excluded)", got, want)
		}
		names, err := tx.ChannelMemberNames(ops)
		if got, want := fmt.Sprint(names), "[alice carol]"; got != want {
			t.Errorf("ChannelMemberNames = %s, want %s", got, want)
		}
		return err
	})
}

// ListChannels lists every channel by name with its member count and
// whether the asking agent is a member.
func testListChannels(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	alice, bob := createAgent(t, db, "alice"), createAgent(t, db, "bob")
	mustUpdate(t, db, func(tx hub.Tx) error {
		ops, err := tx.EnsureChannel(hub.DefaultProject, "#ops", t0)
		if err != nil {
			return err
		}
		if _, err := tx.EnsureChannel(hub.DefaultProject, "#empty", t0); err != nil {
			return err
		}
		for _, a := range []*hub.Agent{alice, bob} {
			if err := tx.InsertChannelMember(ops, a.ID, t0); err != nil {
				return err
			}
		}
		return nil
	})
	mustView(t, db, func(tx hub.Tx) error {
		for _, tc := range []struct {
			agent *hub.Agent
			want  string
		}{
			{alice, "[{default #empty 0 false} {default #ops 2 true}]"},
			{&hub.Agent{ID: 999}, "[{default #empty 0 false} {default #ops 2 false}]"},
		} {
			cs, err := tx.ListChannels(tc.agent.ID)
			if err != nil {
				return err
			}
			if got := fmt.Sprint(cs); got != tc.want {
				t.Errorf("ListChannels(%d) = %s, want %s", tc.agent.ID, got, tc.want)
			}
		}
		return nil
	})
}

func testMeta(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	mustUpdate(t, db, func(tx hub.Tx) error {
		if v, err := tx.Meta("beat"); err != nil || v != "" {
			t.Errorf("Meta of a missing key = %q, %v; want \"\", nil", v, err)
		}
		if err := tx.SetMeta("beat", "1"); err != nil {
			return err
		}
		return tx.SetMeta("beat", "2")
	})
	mustView(t, db, func(tx hub.Tx) error {
		v, err := tx.Meta("beat")
		if v != "2" {
			t.Errorf("Meta(beat) = %q, want 2", v)
		}
		return err
	})
}
