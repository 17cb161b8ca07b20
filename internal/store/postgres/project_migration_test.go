package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestProjectsMigration migrates a database written before projects:
// everything lands in project default, channels keep their IDs and
// members, and afterwards a channel name may exist once per project.
func TestProjectsMigration(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == "0012_projects.sql" {
			break
		}
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO agents (id, name, created_at) VALUES (1, 'a', 1), (2, 'b', 1)`,
		`INSERT INTO channels (id, name, created_at) VALUES (7, '#general', 1)`,
		`INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (7, 1, 1), (7, 2, 1)`,
		`INSERT INTO messages (id, sender, channel, body, created_at) VALUES (1, 'a', '#general', 'hello', 1)`,
		`INSERT INTO cron_jobs (name, kind, expr, target, message, enabled, created_at, updated_at) VALUES ('daily', 'cron', '0 9 * * *', '#general', 'standup', true, 1, 1)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db := openTest(t, u)
	err = db.View(ctx, func(tx hub.Tx) error {
		a, err := tx.AgentByName("b")
		if err != nil || a.Project != hub.DefaultProject {
			t.Errorf("agent b = %+v, %v; want project default", a, err)
		}
		if id, err := tx.ChannelByName(hub.DefaultProject, "#general"); err != nil || id != 7 {
			t.Errorf("ChannelByName(default, #general) = %d, %v; want 7", id, err)
		}
		if members, err := tx.ChannelMemberNames(7); err != nil || len(members) != 2 {
			t.Errorf("members of #general = %v, %v; want a and b", members, err)
		}
		if m, err := tx.MessageByID(1); err != nil || m.Project != hub.DefaultProject {
			t.Errorf("message 1 = %+v, %v; want project default", m, err)
		}
		if j, err := tx.CronJobByName("daily"); err != nil || j.Project != hub.DefaultProject {
			t.Errorf("cron job = %+v, %v; want project default", j, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx hub.Tx) error {
		id, err := tx.EnsureChannel("other", "#general", time.Unix(2, 0))
		if err == nil && id == 7 {
			t.Errorf("EnsureChannel(other, #general) = the default project's channel 7")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
