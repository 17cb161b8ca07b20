package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func testAgentRoundTrip(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	in := &hub.Agent{
		Name: "alice", DisplayName: "Alice", Role: "reviewer", Description: "reads diffs", Locale: "ja",
		CreatedAt: t0, CurrentHeartbeatID: "20260102030405", HeartbeatStartedAt: t0.Truncate(time.Second),
		ReadUpTo: 7, LastSeenAt: t0.Add(time.Minute), LastInteractionBeat: 3,
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.CreateAgent(in, hub.HashToken("tok")) })

	check := func(name string, got *hub.Agent) {
		t.Helper()
		if got.ID != in.ID || got.Name != in.Name || got.DisplayName != in.DisplayName || got.Role != in.Role ||
			got.Description != in.Description || got.Locale != in.Locale || !got.CreatedAt.Equal(in.CreatedAt) ||
			!got.DisabledAt.IsZero() || got.CurrentHeartbeatID != in.CurrentHeartbeatID ||
			!got.HeartbeatStartedAt.Equal(in.HeartbeatStartedAt) || got.ReadUpTo != in.ReadUpTo ||
			!got.LastSeenAt.Equal(in.LastSeenAt) || got.LastInteractionBeat != in.LastInteractionBeat {
			t.Errorf("%s = %+v, want %+v", name, got, in)
		}
	}
	mustView(t, db, func(tx hub.Tx) error {
		for name, get := range map[string]func() (*hub.Agent, error){
			"AgentByName":      func() (*hub.Agent, error) { return tx.AgentByName("alice") },
			"AgentByID":        func() (*hub.Agent, error) { return tx.AgentByID(in.ID) },
			"AgentByTokenHash": func() (*hub.Agent, error) { return tx.AgentByTokenHash(hub.HashToken("tok")) },
		} {
			got, err := get()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			check(name, got)
		}
		return nil
	})
}

func testAgentNotFound(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	createAgent(t, db, "alice")
	tests := []struct {
		name string
		fn   func(tx hub.Tx) error
	}{
		{"AgentByName", func(tx hub.Tx) error { _, err := tx.AgentByName("bob"); return err }},
		{"AddresseeByName", func(tx hub.Tx) error { _, err := tx.AddresseeByName("bob"); return err }},
		{"AgentByID", func(tx hub.Tx) error { _, err := tx.AgentByID(999); return err }},
		{"AgentByTokenHash", func(tx hub.Tx) error { _, err := tx.AgentByTokenHash(hub.HashToken("nope")); return err }},
		{"AgentByTokenHash(nil)", func(tx hub.Tx) error { _, err := tx.AgentByTokenHash(nil); return err }},
		{"UpdateAgent", func(tx hub.Tx) error { return tx.UpdateAgent(&hub.Agent{ID: 999, Name: "ghost"}) }},
		{"MessageByID", func(tx hub.Tx) error { _, err := tx.MessageByID(999); return err }},
		{"ChannelByName", func(tx hub.Tx) error { _, err := tx.ChannelByName(hub.DefaultProject, "#nope"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := db.Update(t.Context(), tt.fn)
			if got, want := hub.ErrorCode(err), hub.ENOTFOUND; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// Constraint violations come back as domain codes, never raw driver errors.
func testConstraintErrors(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	alice := createAgent(t, db, "alice")
	var ch int64
	mustUpdate(t, db, func(tx hub.Tx) (err error) { ch, err = tx.EnsureChannel(hub.DefaultProject, "#ops", t0); return err })
	tests := []struct {
		name string
		fn   func(tx hub.Tx) error
		want string
	}{
		{"duplicate name", func(tx hub.Tx) error {
			return tx.CreateAgent(&hub.Agent{Name: "alice", CreatedAt: t0}, hub.HashToken("other"))
		}, hub.ECONFLICT},
		{"duplicate token", func(tx hub.Tx) error {
			return tx.CreateAgent(&hub.Agent{Name: "bob", CreatedAt: t0}, hub.HashToken("token-alice"))
		}, hub.ECONFLICT},
		{"token of another agent", func(tx hub.Tx) error {
			b := &hub.Agent{Name: "carol", CreatedAt: t0}
			if err := tx.CreateAgent(b, hub.HashToken("carol")); err != nil {
				return err
			}
			return tx.SetAgentToken(b.ID, hub.HashToken("token-alice"))
		}, hub.ECONFLICT},
		{"member of a missing channel", func(tx hub.Tx) error { return tx.InsertChannelMember(999, alice.ID, t0) }, hub.ENOTFOUND},
		{"missing member of a channel", func(tx hub.Tx) error { return tx.InsertChannelMember(ch, 999, t0) }, hub.ENOTFOUND},
		{"delivery to a missing agent", func(tx hub.Tx) error {
			return tx.InsertMessage(&hub.Message{From: "alice", Body: "x", Kind: hub.KindMessage, CreatedAt: t0}, []hub.Delivery{{AgentID: 999}})
		}, hub.ENOTFOUND},
		{"duplicate delivery", func(tx hub.Tx) error {
			return tx.InsertMessage(&hub.Message{From: "alice", Body: "x", Kind: hub.KindMessage, CreatedAt: t0},
				[]hub.Delivery{{AgentID: alice.ID}, {AgentID: alice.ID}})
		}, hub.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.Update(t.Context(), tt.fn)
			if got := hub.ErrorCode(err); got != tt.want {
				t.Errorf("code = %q (%v), want %q", got, err, tt.want)
			}
		})
	}
	// Nothing of the failed writes was kept.
	if got, want := fmt.Sprint(agentNames(t, db)), "[alice]"; got != want {
		t.Errorf("agents = %s, want %s", got, want)
	}
	mustView(t, db, func(tx hub.Tx) error {
		id, err := tx.MaxMessageID()
		if id != 0 {
			t.Errorf("MaxMessageID = %d, want 0 (failed inserts rolled back)", id)
		}
		return err
	})
}

func testListAgents(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	for _, n := range []string{"carol", "alice", "bob"} {
		createAgent(t, db, n)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		b, err := tx.AgentByName("bob")
		if err != nil {
			return err
		}
		b.DisabledAt = t0
		return tx.UpdateAgent(b)
	})
	tests := []struct {
		includeDisabled bool
		want            string
	}{
		{false, "[alice carol]"},
		{true, "[alice bob carol]"},
	}
	for _, tt := range tests {
		mustView(t, db, func(tx hub.Tx) error {
			as, err := tx.ListAgents(tt.includeDisabled)
			var names []string
			for _, a := range as {
				names = append(names, a.Name)
			}
			if got := fmt.Sprint(names); got != tt.want {
				t.Errorf("ListAgents(%v) = %s, want %s", tt.includeDisabled, got, tt.want)
			}
			return err
		})
	}
}

func testSetAgentToken(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := createAgent(t, db, "alice")
	createAgent(t, db, "bob")
	lookup := func(token string) string {
		t.Helper()
		var code string
		mustView(t, db, func(tx hub.Tx) error {
			_, err := tx.AgentByTokenHash(hub.HashToken(token))
			code = hub.ErrorCode(err)
			return nil
		})
		return code
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.SetAgentToken(a.ID, hub.HashToken("new")) })
	if got := lookup("token-alice"); got != hub.ENOTFOUND {
		t.Errorf("old token after rotation: code %q, want %q", got, hub.ENOTFOUND)
	}
	if got := lookup("new"); got != "" {
		t.Errorf("new token after rotation: code %q, want found", got)
	}
	// Revoking (nil) works for several agents at once: NULLs do not collide.
	mustUpdate(t, db, func(tx hub.Tx) error {
		b, err := tx.AgentByName("bob")
		if err != nil {
			return err
		}
		if err := tx.SetAgentToken(a.ID, nil); err != nil {
			return err
		}
		return tx.SetAgentToken(b.ID, nil)
	})
	if got := lookup("new"); got != hub.ENOTFOUND {
		t.Errorf("revoked token: code %q, want %q", got, hub.ENOTFOUND)
	}
}

// TouchAgents never moves last-seen times or beats back.
func testTouchAgents(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := createAgent(t, db, "alice")
	touch := func(at time.Time, beat int64) {
		t.Helper()
		mustUpdate(t, db, func(tx hub.Tx) error {
			return tx.TouchAgents([]hub.Touch{{AgentID: a.ID, LastSeenAt: at, LastInteractionBeat: beat}, {AgentID: 999, LastSeenAt: at}})
		})
	}
	touch(t0.Add(time.Hour), 10)
	touch(t0, 5)
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.AgentByID(a.ID)
		if err != nil {
			return err
		}
		if !got.LastSeenAt.Equal(t0.Add(time.Hour)) || got.LastInteractionBeat != 10 {
			t.Errorf("after an older touch: last seen %v beat %d, want %v beat 10", got.LastSeenAt, got.LastInteractionBeat, t0.Add(time.Hour))
		}
		return nil
	})
}

// StartHeartbeat writes the heartbeat's two columns and nothing else of the
// row, and returns the counts at the agent's read cursor, under the mark a
// heartbeat's Update carries (hub.RowLocked: PostgreSQL runs it under its
// shared write lock).
func testStartHeartbeat(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob}, bob)
	insertMessage(t, db, "", []*hub.Agent{bob, carol}, bob)
	insertMessage(t, db, "", []*hub.Agent{bob})
	mustUpdate(t, db, func(tx hub.Tx) error {
		a, err := tx.AgentByID(bob.ID)
		if err != nil {
			return err
		}
		a.ReadUpTo, a.DisplayName, a.LastSeenAt, a.LastInteractionBeat = m1, "Bob", t0.Add(time.Minute), 4
		return tx.UpdateAgent(a)
	})
	mustView(t, db, func(tx hub.Tx) error {
		var err error
		bob, err = tx.AgentByID(bob.ID)
		return err
	})
	started := t0.Add(time.Hour).Truncate(time.Second)
	err := db.Update(hub.RowLocked(t.Context()), func(tx hub.Tx) error {
		unread, mentions, err := tx.StartHeartbeat(bob.ID, "20260102040405", started)
		if err == nil && (unread != 2 || mentions != 1) {
			t.Errorf("StartHeartbeat above the read cursor: %d unread, %d mentions; want 2, 1", unread, mentions)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.AgentByID(bob.ID)
		if err != nil {
			return err
		}
		want := *bob
		want.CurrentHeartbeatID, want.HeartbeatStartedAt = "20260102040405", started
		if got.CurrentHeartbeatID != want.CurrentHeartbeatID || !got.HeartbeatStartedAt.Equal(want.HeartbeatStartedAt) ||
			got.ReadUpTo != want.ReadUpTo || got.DisplayName != want.DisplayName || !got.LastSeenAt.Equal(want.LastSeenAt) ||
			got.LastInteractionBeat != want.LastInteractionBeat || got.Disabled() {
			t.Errorf("after StartHeartbeat: %+v, want %+v", got, want)
		}
		return nil
	})
	err = db.Update(hub.RowLocked(t.Context()), func(tx hub.Tx) error {
		_, _, err := tx.StartHeartbeat(9999, "20260102040405", started)
		return err
	})
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("StartHeartbeat of an unknown agent: %v, want ENOTFOUND", err)
	}
}

// ReadCursor gives the cursor with the counts at it, SetReadCursor moves
// the cursor alone and the counts follow it.
func testReadCursor(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	bob, carol := createAgent(t, db, "bob"), createAgent(t, db, "carol")
	m1 := insertMessage(t, db, "", []*hub.Agent{bob}, bob)
	m2 := insertMessage(t, db, "", []*hub.Agent{bob, carol})
	insertMessage(t, db, "", []*hub.Agent{carol})
	check := func(when string, wantCursor, wantUnread int64) {
		t.Helper()
		mustView(t, db, func(tx hub.Tx) error {
			cursor, unread, latest, err := tx.ReadCursor(bob.ID)
			if err != nil {
				return err
			}
			if cursor != wantCursor || unread != wantUnread || latest != m2 {
				t.Errorf("%s: ReadCursor = cursor %d, %d unread, latest %d; want %d, %d, %d", when, cursor, unread, latest, wantCursor, wantUnread, m2)
			}
			got, err := tx.AgentByID(bob.ID)
			if err == nil && (got.ReadUpTo != cursor || got.Name != "bob" || !got.CreatedAt.Equal(bob.CreatedAt)) {
				t.Errorf("%s: AgentByID = %+v, want bob's row with cursor %d", when, got, cursor)
			}
			return err
		})
	}
	check("at first", 0, 2)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.SetReadCursor(bob.ID, m1) })
	check("past the first message", m1, 1)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.SetReadCursor(bob.ID, m2) })
	check("past both", m2, 0)
	mustView(t, db, func(tx hub.Tx) error {
		if _, _, _, err := tx.ReadCursor(9999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("ReadCursor of an unknown agent: %v, want ENOTFOUND", err)
		}
		return nil
	})
	err := db.Update(t.Context(), func(tx hub.Tx) error { return tx.SetReadCursor(9999, m1) })
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("SetReadCursor of an unknown agent: %v, want ENOTFOUND", err)
	}
}
