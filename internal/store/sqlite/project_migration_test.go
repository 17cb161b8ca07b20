package sqlite

import (
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// TestProjectsMigration migrates a data dir written before projects: every
// agent, channel, message and cron job lands in project default, channel
// IDs and members survive the rebuild of channels, and afterwards a
// channel name may exist once per project.
func TestProjectsMigration(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	raw := migratedBefore(t, path, "0012_projects.sql")
	if _, err := raw.Exec(`
		INSERT INTO agents (id, name, created_at) VALUES (1, 'a', 1), (2, 'b', 1);
		INSERT INTO channels (id, name, created_at) VALUES (7, '#general', 1), (8, '#ops', 1);
		INSERT INTO channel_members (channel_id, agent_id, joined_at) VALUES (7, 1, 1), (7, 2, 1), (8, 2, 1);
		INSERT INTO messages (id, sender, channel, body, created_at) VALUES (1, 'a', '#general', 'hello', 1);
		INSERT INTO deliveries (agent_id, message_id) VALUES (2, 1);
		INSERT INTO cron_jobs (name, kind, expr, target, message, enabled, created_at, updated_at) VALUES ('daily', 'cron', '0 9 * * *', '#ops', 'standup', 1, 1, 1);
		INSERT INTO reservations (agent_id, pattern, mode, created_at, expires_at) VALUES (1, 'src', 'exclusive', 1, 9000000000000000000)`); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, path)
	mustView(t, db, func(tx hub.Tx) error {
		for _, name := range []string{"a", "b"} {
			a, err := tx.AgentByName(name)
			if err != nil {
				return err
			}
			if a.Project != hub.DefaultProject {
				t.Errorf("agent %s project = %q, want default", name, a.Project)
			}
		}
		for name, want := range map[string]int64{"#general": 7, "#ops": 8} {
			if id, err := tx.ChannelByName(hub.DefaultProject, name); err != nil || id != want {
				t.Errorf("ChannelByName(default, %s) = %d, %v; want %d", name, id, err, want)
			}
		}
		if members, err := tx.ChannelMemberNames(7); err != nil || strings.Join(members, ",") != "a,b" {
			t.Errorf("members of #general = %v, %v; want a,b", members, err)
		}
		m, err := tx.MessageByID(1)
		if err != nil || m.Project != hub.DefaultProject {
			t.Errorf("message 1 = %+v, %v; want project default", m, err)
		}
		j, err := tx.CronJobByName("daily")
		if err != nil || j.Project != hub.DefaultProject {
			t.Errorf("cron job = %+v, %v; want project default", j, err)
		}
		rs, err := tx.ActiveReservations(t0, 0)
		if err != nil || len(rs) != 1 || rs[0].Project != hub.DefaultProject {
			t.Errorf("reservations = %+v, %v; want one of project default", rs, err)
		}
		if ok, err := tx.ProjectExists(hub.DefaultProject); err != nil || !ok {
			t.Errorf("ProjectExists(default) = %v, %v", ok, err)
		}
		return nil
	})
	// After the rebuild: the foreign keys hold, and
	// "#general" may be created again in another project.
	mustUpdate(t, db, func(tx hub.Tx) error {
		id, err := tx.EnsureChannel("other", "#general", t0)
		if err != nil {
			return err
		}
		if id == 7 {
			t.Errorf("EnsureChannel(other, #general) = the default project's channel 7")
		}
		return tx.InsertChannelMember(id, 1, t0)
	})
	var schema string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'channel_members'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, `"channels"`) && !strings.Contains(schema, "REFERENCES channels(") {
		t.Errorf("channel_members after the migration: %s; want its channel_id to reference channels", schema)
	}
	rows, err := raw.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Errorf("foreign_key_check reports violations after the migration")
	}
	rows.Close()
}
