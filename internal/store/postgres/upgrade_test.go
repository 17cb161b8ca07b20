package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/migration"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// mainsMigrations are the migrations of the hubs whose PostgreSQL stores
// numbered them on their own, in their order, as they recorded them.
var mainsMigrations = []string{"0001_core.sql", "0002_liveness.sql", "0003_orchestrator.sql", "0004_reservations.sql",
	"0005_once.sql", "0006_receipts.sql", "0007_injections.sql", "0008_join_codes.sql", "0009_search.sql",
	"0010_inbox_counts.sql", "0012_projects.sql", "0013_lighter_nudges.sql", "0014_tasks.sql", "0015_inbox.sql", "0016_delivery.sql"}

// TestUpgradeKeepsRows migrates a schema as the hubs of PostgreSQL's own
// list left it (the same texts, in their order, under their numbers),
// fills it below the store, opens it with this hub and checks that every
// row of every table it held is still there, that schema_migrations is
// numbered as the one list is, and that the store reads what was written.
func TestUpgradeKeepsRows(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
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
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
	for _, name := range mainsMigrations {
		var version int
		fmt.Sscanf(name, "%d", &version)
		_, change, _ := strings.Cut(name, "_")
		i := slices.IndexFunc(ms, func(m migration.Migration) bool { return strings.HasSuffix(m.Name, "_"+change) })
		if i < 0 {
			t.Fatalf("no migration of the list changes %s", change)
		}
		exec(ms[i].SQL)
		exec(`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, name)
	}
	exec(`INSERT INTO agents (id, name, created_at, read_up_to) VALUES (1, 'a', 1, 0), (2, 'b', 1, 1)`)
	exec(`INSERT INTO channels (id, project, name, created_at) VALUES (7, 'default', '#general', 1)`)
	exec(`INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (7, 1, 1), (7, 2, 1)`)
	exec(`INSERT INTO messages (id, sender, channel, body, created_at) VALUES (1, 'a', '#general', 'hello', 1), (2, 'b', '#general', 'hi', 2)`)
	exec(`INSERT INTO deliveries (agent_id, message_id) VALUES (2, 1), (1, 2)`)
	exec(`INSERT INTO cron_jobs (name, kind, expr, target, message, enabled, created_at, updated_at) VALUES ('daily', 'cron', '0 9 * * *', '#general', 'standup', true, 1, 1)`)
	exec(`INSERT INTO reservations (agent_id, pattern, mode, created_at, expires_at) VALUES (1, 'src', 'exclusive', 1, 9000000000000000000)`)
	exec(`INSERT INTO agent_checks (agent_id, next_check_at, episode, nudge_count, last_nudge_at) VALUES (1, 0, '', 0, 0), (2, 5, 'inactive', 1, 4)`)
	exec(`INSERT INTO notice_counts (agent_id, window_start, sent) VALUES (1, 3600000000000, 2), (2, 7200000000000, 1)`)

	tables := selectRows(t, conn, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'`)
	columns := map[string]string{}
	before := map[string][]string{}
	for _, table := range tables {
		columns[table] = strings.Join(selectRows(t, conn, `SELECT '"' || column_name || '"' FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table), ", ")
		before[table] = selectRows(t, conn, `SELECT `+columns[table]+` FROM "`+table+`"`)
	}

	for range 2 { // the second start finds nothing to do
		db, err := Open(ctx, u, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		// The tables a later migration folded into another, and where
		// their rows are now (the same columns, sorted by name as above).
		moved := map[string]string{
			"notice_counts": `SELECT agent_id, notices_sent, notice_window FROM agent_checks WHERE notice_window <> 0`,
		}
		for table, rows := range before {
			if q, ok := moved[table]; ok {
				if got := selectRows(t, conn, q); !slices.Equal(got, rows) {
					t.Errorf("table %s after the upgrade, moved (%s):\n%s\nwant\n%s", table, q, strings.Join(got, "\n"), strings.Join(rows, "\n"))
				}
				continue
			}
			// The columns the table had: a later migration may add some.
			if got := selectRows(t, conn, `SELECT `+columns[table]+` FROM "`+table+`"`); !slices.Equal(got, rows) {
				t.Errorf("table %s after the upgrade:\n%s\nwant\n%s", table, strings.Join(got, "\n"), strings.Join(rows, "\n"))
			}
		}
		var want []string
		for _, m := range ms {
			want = append(want, fmt.Sprint(m.Version, " ", m.Name))
		}
		slices.Sort(want)
		if got := selectRows(t, conn, `SELECT version, name FROM schema_migrations`); !slices.Equal(got, want) || db.SchemaVersion() != ms[len(ms)-1].Version {
			t.Errorf("schema_migrations = %v, SchemaVersion %d; want the one list %v", got, db.SchemaVersion(), want)
		}
		err = db.View(ctx, func(tx hub.Tx) error {
			b, err := tx.AgentByName("b")
			if err != nil {
				return err
			}
			if members, err := tx.ChannelMemberNames(7); err != nil || len(members) != 2 {
				t.Errorf("members of #general = %v, %v; want a and b", members, err)
			}
			if m, err := tx.MessageByID(2); err != nil || m.Body != "hi" || b.ReadUpTo != 1 {
				t.Errorf("message 2 = %+v, %v, b read up to %d; want hi, 1", m, err, b.ReadUpTo)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

// selectRows runs q on conn and returns its rows as text, sorted.
func selectRows(tb testing.TB, conn *pgx.Conn, q string, args ...any) []string {
	tb.Helper()
	rows, err := conn.Query(context.Background(), q, args...)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	slices.Sort(out)
	return out
}
