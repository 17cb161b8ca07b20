package postgres

import (
	"context"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// wrongCounts lists the agents whose inbox_counts row differs from a full
// count of their deliveries (or is missing).
func wrongCounts(tb testing.TB, conn *pgx.Conn) []int64 {
	tb.Helper()
	rows, _ := conn.Query(context.Background(), `SELECT a.id FROM agents a LEFT JOIN inbox_counts c ON c.agent_id = a.id
		WHERE c.agent_id IS NULL
		   OR c.unread <> (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to)
		   OR c.mentions <> (SELECT COUNT(*) FROM deliveries d WHERE d.agent_id = a.id AND d.message_id > a.read_up_to AND d.mention)
		   OR c.latest <> (SELECT COALESCE(MAX(d.message_id), 0) FROM deliveries d WHERE d.agent_id = a.id)
		ORDER BY a.id`)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		tb.Fatalf("full count: %v", err)
	}
	return ids
}

// TestInboxCountsMigration checks that the migration which adds the
// counters fills them for a store that already holds messages, and that
// the triggers keep them through what the conformance suite cannot write
// through hub.Tx: agents deleted with their deliveries (cascades) and a
// bulk COPY of deliveries, as copy-store does.
func TestInboxCountsMigration(t *testing.T) {
	u := pgtest.Schema(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
	for _, m := range ms {
		if m.Name == "0004_inbox_counts.sql" {
			break
		}
		exec(m.SQL)
		exec(`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
	}
	// Three agents, one of which has read part of its inbox.
	exec(`INSERT INTO agents (id, name, created_at, read_up_to) VALUES (1, 'a', 1, 0), (2, 'b', 1, 3), (3, 'c', 1, 0)`)
	exec(`INSERT INTO messages (id, sender, body, created_at) SELECT g, 'x', 'b', 1 FROM generate_series(1, 5) g`)
	exec(`INSERT INTO deliveries (agent_id, message_id, mention) VALUES
		(1, 1, false), (1, 2, true), (1, 5, true), (2, 1, true), (2, 3, false), (2, 4, true), (2, 5, false)`)
	exec(`UPDATE message_ids SET last_id = 5`)

	db := openTest(t, u)
	for _, tc := range []struct{ agent, cursor, unread, mentions, latest int64 }{
		{1, 0, 3, 2, 5}, {2, 3, 2, 1, 5}, {3, 0, 0, 0, 0},
	} {
		err := db.View(ctx, func(tx hub.Tx) error {
			u, m, l, err := tx.InboxCounts(tc.agent, tc.cursor)
			if u != tc.unread || m != tc.mentions || l != tc.latest {
				t.Errorf("agent %d after migrating: InboxCounts = %d, %d, %d; want %d, %d, %d", tc.agent, u, m, l, tc.unread, tc.mentions, tc.latest)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if bad := wrongCounts(t, conn); len(bad) > 0 {
		t.Fatalf("after migrating: wrong counters for agents %v", bad)
	}

	// A COPY of deliveries (one statement, many rows) and a deletion of
	// the newest delivered message.
	exec(`INSERT INTO messages (id, sender, body, created_at) SELECT g, 'x', 'b', 1 FROM generate_series(6, 9) g`)
	rows := [][]any{{int64(1), int64(6), true}, {int64(2), int64(6), false}, {int64(3), int64(7), true}, {int64(3), int64(9), false}, {int64(2), int64(2), true}}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"deliveries"}, []string{"agent_id", "message_id", "mention"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	exec(`DELETE FROM messages WHERE id = 9`)
	if bad := wrongCounts(t, conn); len(bad) > 0 {
		t.Fatalf("after a COPY and a deletion: wrong counters for agents %v", bad)
	}
	// An agent deleted: its deliveries and its counter row cascade; the
	// others' are untouched.
	exec(`DELETE FROM agents WHERE id = 2`)
	var left int64
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM inbox_counts WHERE agent_id = 2`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("counter rows of the deleted agent: %d (%v), want 0", left, err)
	}
	if bad := wrongCounts(t, conn); len(bad) > 0 {
		t.Fatalf("after deleting an agent: wrong counters for agents %v", bad)
	}
}
