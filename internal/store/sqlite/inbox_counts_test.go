package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// fullCount counts agentID's deliveries above its read cursor by scanning
// them: what the counters must equal.
func fullCount(tb testing.TB, raw *sql.DB, agentID int64) (readUpTo, unread, mentions, latest int64) {
	tb.Helper()
	err := raw.QueryRow(`SELECT a.read_up_to,
		(SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to),
		(SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to AND d.mention = 1),
		(SELECT COALESCE(MAX(d.message_id), 0) FROM deliveries d WHERE d.agent_id = a.id)
		FROM agents a WHERE a.id = ?`, agentID).Scan(&readUpTo, &unread, &mentions, &latest)
	if err != nil {
		tb.Fatalf("full count of agent %d: %v", agentID, err)
	}
	return readUpTo, unread, mentions, latest
}

// checkCounts compares InboxCounts at each live agent's read cursor, and
// at one other cursor, with a full count.
func checkCounts(tb testing.TB, db *DB, raw *sql.DB, step string) {
	tb.Helper()
	ids, err := raw.Query(`SELECT id FROM agents ORDER BY id`)
	if err != nil {
		tb.Fatal(err)
	}
	var agents []int64
	for ids.Next() {
		var id int64
		if err := ids.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		agents = append(agents, id)
	}
	ids.Close()
	for _, id := range agents {
		readUpTo, unread, mentions, latest := fullCount(tb, raw, id)
		mustView(tb, db, func(tx hub.Tx) error {
			u, m, l, err := tx.InboxCounts(id, readUpTo)
			if err != nil {
				return err
			}
			if u != unread || m != mentions || l != latest {
				tb.Errorf("%s: agent %d: InboxCounts at its cursor %d = %d unread, %d mentions, latest %d; a full count gives %d, %d, %d",
					step, id, readUpTo, u, m, l, unread, mentions, latest)
			}
			// Another cursor is counted, and must agree too.
			var want int64
			if err := raw.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE agent_id = ? AND message_id > ?`, id, readUpTo/2).Scan(&want); err != nil {
				return err
			}
			if u, _, _, err := tx.InboxCounts(id, readUpTo/2); err != nil || u != want {
				tb.Errorf("%s: agent %d: InboxCounts above %d = %d (%v), want %d", step, id, readUpTo/2, u, err, want)
			}
			return nil
		})
	}
	var orphans int64
	if err := raw.QueryRow(`SELECT COUNT(*) FROM agents a LEFT JOIN inbox_counts c ON c.agent_id = a.id WHERE c.agent_id IS NULL`).Scan(&orphans); err != nil {
		tb.Fatal(err)
	}
	if orphans != 0 {
		tb.Errorf("%s: %d agents have no inbox_counts row", step, orphans)
	}
}

// TestInboxCountsMatchFullCount runs a random mix of the writes that move
// unread counts — posts (one by one and in bulk), mentions, read cursors
// moved both ways, writes rolled back inside a group commit, messages and
// agents deleted — and checks after each round that the counters equal a
// full count.
func TestInboxCountsMatchFullCount(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	db := openDB(t, path)
	raw := rawDB(t, path)
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	var agents []*hub.Agent
	for i := range 6 {
		agents = append(agents, createAgent(t, db, fmt.Sprintf("agent-%d", i)))
	}
	deliveries := func() []hub.Delivery {
		var ds []hub.Delivery
		for _, a := range agents {
			if rng.IntN(3) > 0 {
				ds = append(ds, hub.Delivery{AgentID: a.ID, Mention: rng.IntN(4) == 0})
			}
		}
		return ds
	}
	maxID := func() int64 {
		var id int64
		mustView(t, db, func(tx hub.Tx) error { var err error; id, err = tx.MaxMessageID(); return err })
		return id
	}
	errRollback := errors.New("roll back")
	created := len(agents)
	for round := range 40 {
		for range 20 {
			switch op := rng.IntN(10); {
			case op < 4: // a post
				m := &hub.Message{From: "x", Body: "b", Kind: hub.KindMessage, CreatedAt: t0}
				ds := deliveries()
				mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
			case op == 4: // a bulk insert, as the nudge sweep does
				var ms []*hub.Message
				var dss [][]hub.Delivery
				for range 1 + rng.IntN(5) {
					ms = append(ms, &hub.Message{From: hub.SenderOrchestrator, Body: "n", Kind: hub.KindNudge, CreatedAt: t0})
					dss = append(dss, deliveries())
				}
				mustUpdate(t, db, func(tx hub.Tx) error { return tx.(*Tx).InsertMessages(ms, dss) })
			case op < 7: // a read cursor moves, mostly forward
				a := agents[rng.IntN(len(agents))]
				mustUpdate(t, db, func(tx hub.Tx) error {
					cur, err := tx.AgentByID(a.ID)
					if err != nil {
						return err
					}
					cur.ReadUpTo = rng.Int64N(maxID() + 2)
					return tx.UpdateAgent(cur)
				})
			case op == 7: // a post and a cursor move rolled back inside a group commit
				release, done := blockWriter(t, db)
				errc := make(chan error, 2)
				go func() {
					errc <- db.Update(ctx, func(tx hub.Tx) error {
						if err := tx.InsertMessage(&hub.Message{From: "x", Body: "gone", Kind: hub.KindMessage, CreatedAt: t0}, deliveries()); err != nil {
							return err
						}
						a, err := tx.AgentByID(agents[0].ID)
						if err != nil {
							return err
						}
						a.ReadUpTo = 0
						if err := tx.UpdateAgent(a); err != nil {
							return err
						}
						return errRollback
					})
				}()
				go func() {
					errc <- db.Update(ctx, func(tx hub.Tx) error {
						return tx.InsertMessage(&hub.Message{From: "x", Body: "kept", Kind: hub.KindMessage, CreatedAt: t0}, deliveries())
					})
				}()
				waitQueued(t, db, 2)
				release()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				for range 2 {
					if err := <-errc; err != nil && !errors.Is(err, errRollback) {
						t.Fatal(err)
					}
				}
			case op == 8: // a message deleted (its deliveries cascade): any, or the newest
				order := []string{"random()", "message_id DESC"}[rng.IntN(2)]
				if _, err := raw.Exec(`PRAGMA foreign_keys = ON; DELETE FROM messages WHERE id = (SELECT message_id FROM deliveries ORDER BY ` + order + ` LIMIT 1)`); err != nil {
					t.Fatal(err)
				}
			default: // a new agent, sometimes one deleted
				created++
				agents = append(agents, createAgent(t, db, fmt.Sprintf("agent-%d", created)))
				if rng.IntN(3) == 0 {
					i := rng.IntN(len(agents))
					if _, err := raw.Exec(`PRAGMA foreign_keys = ON; DELETE FROM agents WHERE id = ?`, agents[i].ID); err != nil {
						t.Fatal(err)
					}
					agents = append(agents[:i], agents[i+1:]...)
				}
			}
		}
		checkCounts(t, db, raw, fmt.Sprintf("round %d", round))
		if t.Failed() {
			return
		}
	}
	var n int64
	if err := raw.QueryRow(`SELECT COUNT(*) FROM deliveries`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("the mix left %d deliveries (%v): it tested nothing", n, err)
	}
}

// TestInboxCountsMigration checks that the migration which adds the
// counters fills them for a store that already holds messages.
// migratedBefore applies, to a new database at path, the migrations that
// come before the one named stop, as an older hub left it, and returns a
// raw handle on it to fill with that hub's data.
func migratedBefore(tb testing.TB, path, stop string) *sql.DB {
	tb.Helper()
	ms, err := migrations()
	if err != nil {
		tb.Fatal(err)
	}
	raw := rawDB(tb, path)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '')`); err != nil {
		tb.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == stop {
			return raw
		}
		if _, err := raw.Exec(m.SQL); err != nil {
			tb.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Fatalf("no migration %s", stop)
	return nil
}

func TestInboxCountsMigration(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	raw := migratedBefore(t, path, "0004_inbox_counts.sql")
	// Three agents, one of which has read part of its inbox.
	if _, err := raw.Exec(`
		INSERT INTO agents (id, name, created_at, read_up_to) VALUES (1, 'a', 1, 0), (2, 'b', 1, 3), (3, 'c', 1, 0);
		INSERT INTO messages (id, sender, body, created_at) VALUES (1, 'x', 'b', 1), (2, 'x', 'b', 1), (3, 'x', 'b', 1), (4, 'x', 'b', 1), (5, 'x', 'b', 1);
		INSERT INTO deliveries (agent_id, message_id, mention) VALUES (1, 1, 0), (1, 2, 1), (1, 5, 1), (2, 1, 1), (2, 3, 0), (2, 4, 1), (2, 5, 0)`); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, path)
	for _, tc := range []struct{ agent, cursor, unread, mentions, latest int64 }{
		{1, 0, 3, 2, 5}, {2, 3, 2, 1, 5}, {3, 0, 0, 0, 0},
	} {
		mustView(t, db, func(tx hub.Tx) error {
			u, m, l, err := tx.InboxCounts(tc.agent, tc.cursor)
			if err != nil {
				return err
			}
			if u != tc.unread || m != tc.mentions || l != tc.latest {
				t.Errorf("agent %d after migrating: InboxCounts = %d, %d, %d; want %d, %d, %d", tc.agent, u, m, l, tc.unread, tc.mentions, tc.latest)
			}
			return nil
		})
	}
	checkCounts(t, db, raw, "after migrating")
}

// BenchmarkBacklogCounts reads the counts a heartbeat reply and a nudge
// check need for an agent with 10,000 unread messages, 10 of which mention
// it. Neither may walk the backlog:
//
//	go test ./internal/store/sqlite -run '^$' -bench BacklogCounts
func BenchmarkBacklogCounts(b *testing.B) {
	db := newDB(b)
	a := createAgent(b, db, "reader")
	mustUpdate(b, db, func(tx hub.Tx) error {
		for i := range 10_000 {
			m := &hub.Message{From: "x", Body: "b", Kind: hub.KindMessage, CreatedAt: t0}
			if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: a.ID, Mention: i%1000 == 0}}); err != nil {
				return err
			}
		}
		return nil
	})
	ctx := context.Background()
	b.Run("InboxCounts", func(b *testing.B) {
		for b.Loop() {
			err := db.View(ctx, func(tx hub.Tx) error {
				u, _, _, err := tx.InboxCounts(a.ID, 0)
				if err == nil && u != 10_000 {
					err = fmt.Errorf("unread = %d, want 10000", u)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UnreadMentions", func(b *testing.B) {
		for b.Loop() {
			err := db.View(ctx, func(tx hub.Tx) error {
				n, _, err := tx.UnreadMentions(a.ID, 0)
				if err == nil && n != 10 {
					err = fmt.Errorf("unread mentions = %d, want 10", n)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
