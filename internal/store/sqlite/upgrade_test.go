package sqlite

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// mainsLastMigration is the newest migration of the hubs whose SQLite
// stores numbered their migrations on their own; the one list keeps
// SQLite's numbers.
const mainsLastMigration = 18

// TestUpgradeKeepsRows migrates a database as the hubs of SQLite's own
// list left it (their migrations, in their order), fills it below the
// store, opens it with this hub and checks that every row of every table
// it held is still there, that schema_migrations matches the one list and
// that the store reads what was written.
func TestUpgradeKeepsRows(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT 'then')`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:mainsLastMigration] {
		if _, err := raw.Exec(m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`
		INSERT INTO agents (id, name, created_at, read_up_to) VALUES (1, 'a', 1, 0), (2, 'b', 1, 1);
		INSERT INTO channels (id, project, name, created_at) VALUES (7, 'default', '#general', 1);
		INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (7, 1, 1), (7, 2, 1);
		INSERT INTO messages (id, sender, channel, body, created_at) VALUES (1, 'a', '#general', 'hello', 1), (2, 'b', '#general', 'hi', 2);
		INSERT INTO deliveries (agent_id, message_id) VALUES (2, 1), (1, 2);
		INSERT INTO cron_jobs (name, kind, expr, target, message, enabled, created_at, updated_at) VALUES ('daily', 'cron', '0 9 * * *', '#general', 'standup', 1, 1, 1);
		INSERT INTO reservations (agent_id, pattern, mode, created_at, expires_at) VALUES (1, 'src', 'exclusive', 1, 9000000000000000000);
		INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at) VALUES (1, 0, '', 0, 0), (2, 5, 'inactive', 1, 4);
		INSERT INTO notice_counts (agent_id, window_start, sent) VALUES (1, 3600000000000, 2), (2, 7200000000000, 1)`); err != nil {
		t.Fatal(err)
	}
	tables := selectRows(t, raw, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name <> 'schema_migrations'`)
	columns := map[string]string{}
	before := map[string][]string{}
	for _, table := range tables {
		columns[table] = strings.Join(selectRows(t, raw, `SELECT '"' || name || '"' FROM pragma_table_info('`+table+`')`), ", ")
		before[table] = selectRows(t, raw, `SELECT `+columns[table]+` FROM "`+table+`"`)
	}

	db := openDB(t, path)
	// The tables a later migration folded into another, and where their
	// rows are now (the same columns, sorted by name as above).
	moved := map[string]string{
		"notice_counts": `SELECT agent_id, notices_sent, notice_window FROM agent_checks WHERE notice_window <> 0`,
	}
	for table, rows := range before {
		if q, ok := moved[table]; ok {
			if got := selectRows(t, raw, q); !slices.Equal(got, rows) {
				t.Errorf("table %s after the upgrade, moved (%s):\n%s\nwant\n%s", table, q, strings.Join(got, "\n"), strings.Join(rows, "\n"))
			}
			continue
		}
		// The columns the table had: a later migration may add some.
		if got := selectRows(t, raw, `SELECT `+columns[table]+` FROM "`+table+`"`); !slices.Equal(got, rows) {
			t.Errorf("table %s after the upgrade:\n%s\nwant\n%s", table, strings.Join(got, "\n"), strings.Join(rows, "\n"))
		}
	}
	var want []string
	for _, m := range ms {
		want = append(want, fmt.Sprint(m.Version, " ", m.Name))
	}
	slices.Sort(want)
	if got := selectRows(t, raw, `SELECT version, name FROM schema_migrations`); !slices.Equal(got, want) {
		t.Errorf("schema_migrations = %v, want the one list %v", got, want)
	}
	mustView(t, db, func(tx hub.Tx) error {
		b, err := tx.AgentByName("b")
		if err != nil {
			return err
		}
		if members, err := tx.ChannelMemberNames(7); err != nil || strings.Join(members, ",") != "a,b" {
			t.Errorf("members of #general = %v, %v; want a,b", members, err)
		}
		if m, err := tx.MessageByID(2); err != nil || m.Body != "hi" || b.ReadUpTo != 1 {
			t.Errorf("message 2 = %+v, %v, b read up to %d; want hi, 1", m, err, b.ReadUpTo)
		}
		return nil
	})
}

// selectRows runs q on raw and returns its rows as text, sorted.
func selectRows(tb testing.TB, raw *sql.DB, q string) []string {
	tb.Helper()
	rows, err := raw.Query(q)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	slices.Sort(out)
	return out
}
