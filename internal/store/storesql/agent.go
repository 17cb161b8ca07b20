package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.AgentTx. PostgreSQL's store adds to AgentByID
// and UpdateAgent a row lock under its shared write lock, and runs
// StartHeartbeat under that lock.

// AgentWhere returns the agent where holds of, notFound's error when none
// does.
func (x Statements) AgentWhere(notFound func() error, where string, arg any) (*hub.Agent, error) {
	a, err := row.Agent(x.DB.QueryRow(`SELECT `+row.AgentColumns+` FROM agents WHERE `+where, arg))
	if x.DB.IsNoRows(err) {
		return nil, notFound()
	}
	return a, err
}

// CreateAgent implements hub.AgentTx. A taken name or token is reported
// without aborting the transaction (ON CONFLICT DO NOTHING).
func (x Statements) CreateAgent(a *hub.Agent, tokenHash []byte) error {
	err := x.DB.QueryRow(`INSERT INTO agents (name, display_name, role, description, locale, token_hash, created_at, disabled_at,
		current_heartbeat_id, heartbeat_started_at, read_up_to, last_seen_at, last_interaction_beat, project)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		a.Name, a.DisplayName, a.Role, a.Description, a.Locale, tokenHash, row.Nanos(a.CreatedAt), row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, hub.ProjectOr(a.Project)).Scan(&a.ID)
	if !x.DB.IsNoRows(err) {
		return err
	}
	if _, err := x.AgentByName(a.Name); err == nil {
		return hub.AgentNameTaken(a.Name)
	}
	return hub.TokenTaken()
}

// AgentByName implements hub.AgentTx.
func (x Statements) AgentByName(name string) (*hub.Agent, error) {
	return x.AgentWhere(func() error { return hub.NoAgentNamed(name) }, `name = ?`, name)
}

// AgentByID implements hub.AgentTx.
func (x Statements) AgentByID(id int64) (*hub.Agent, error) {
	return x.AgentWhere(hub.NoAgentWithID, `id = ?`, id)
}

// AgentByTokenHash implements hub.AgentTx.
func (x Statements) AgentByTokenHash(hash []byte) (*hub.Agent, error) {
	return x.AgentWhere(hub.NoAgentWithToken, `token_hash = ?`, hash)
}

// AddresseeByName implements hub.AgentTx.
func (x Statements) AddresseeByName(name string) (hub.Addressee, error) {
	a := hub.Addressee{Name: name}
	var disabledAt int64
	err := x.DB.QueryRow(`SELECT id, project, disabled_at FROM agents WHERE name = ?`, name).Scan(&a.ID, &a.Project, &disabledAt)
	if x.DB.IsNoRows(err) {
		return hub.Addressee{}, hub.NoAgentNamed(name)
	} else if err != nil {
		return hub.Addressee{}, err
	}
	a.Disabled = disabledAt != 0
	return a, nil
}

// ListAgents implements hub.AgentTx.
func (x Statements) ListAgents(includeDisabled bool) ([]*hub.Agent, error) {
	q := `SELECT ` + row.AgentColumns + ` FROM agents`
	if !includeDisabled {
		q += ` WHERE disabled_at = 0`
	}
	return all(x.DB, row.NewAgentScan().Scan, q+` ORDER BY name`)
}

// CountAgents implements hub.AgentTx.
func (x Statements) CountAgents() (int64, error) {
	var n int64
	err := x.DB.QueryRow(`SELECT COUNT(*) FROM agents`).Scan(&n)
	return n, err
}

// UpdateAgent implements hub.AgentTx.
func (x Statements) UpdateAgent(a *hub.Agent) error {
	n, err := x.DB.Exec(`UPDATE agents SET display_name = ?, role = ?, description = ?, locale = ?, disabled_at = ?,
		current_heartbeat_id = ?, heartbeat_started_at = ?, read_up_to = ?, last_seen_at = ?, last_interaction_beat = ?
		WHERE id = ?`,
		a.DisplayName, a.Role, a.Description, a.Locale, row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, a.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.NoAgentNamed(a.Name)
	}
	return nil
}

// StartHeartbeat implements hub.AgentTx: one statement writes the two
// columns and reads the counters inbox_counts keeps at the agent's read
// cursor (0004_inbox_counts.sql; a row for every agent), not the row read
// and written back whole with the counts read after.
func (x Statements) StartHeartbeat(agentID int64, id string, startedAt time.Time) (unread, mentions int64, err error) {
	err = x.DB.QueryRow(`UPDATE agents SET current_heartbeat_id = ?, heartbeat_started_at = ? WHERE id = ?
		RETURNING (SELECT unread FROM inbox_counts WHERE agent_id = agents.id), (SELECT mentions FROM inbox_counts WHERE agent_id = agents.id)`,
		id, row.Nanos(startedAt), agentID).Scan(&unread, &mentions)
	if x.DB.IsNoRows(err) {
		return 0, 0, hub.NoAgentWithID()
	}
	return unread, mentions, err
}

// SetReadCursor implements hub.AgentTx: the one column, whose change the
// triggers of inbox_counts follow (0004_inbox_counts.sql).
func (x Statements) SetReadCursor(agentID, upTo int64) error {
	n, err := x.DB.Exec(`UPDATE agents SET read_up_to = ? WHERE id = ?`, upTo, agentID)
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.NoAgentWithID()
	}
	return nil
}

// SetAgentToken implements hub.AgentTx. A token another agent holds is
// reported without aborting the transaction; a changed token is told to
// Changed.
func (x Statements) SetAgentToken(agentID int64, hash []byte) error {
	n, err := x.DB.Exec(`UPDATE agents SET token_hash = ? WHERE id = ?
		AND NOT EXISTS (SELECT 1 FROM agents WHERE token_hash = ? AND id <> ?)`, hash, agentID, hash, agentID)
	if err != nil {
		return err
	}
	if n == 0 && hash != nil {
		var taken bool
		if err := x.DB.QueryRow(`SELECT EXISTS (SELECT 1 FROM agents WHERE token_hash = ? AND id <> ?)`, hash, agentID).Scan(&taken); err != nil {
			return fmt.Errorf("set agent token: %w", err)
		}
		if taken {
			return hub.TokenTaken()
		}
	}
	if n == 0 || x.Changed == nil {
		return nil
	}
	return x.Changed(agentID, hub.TokenChanged)
}

// TouchAgents implements hub.AgentTx: the orchestrator flushes every
// caller of the last tick, so the touches go in statements of many rows,
// each agent once with its latest values, never moving a time back.
func (x Statements) TouchAgents(touches []hub.Touch) error {
	latest := make(map[int64]int, len(touches)) // agent → its row in rows
	rows := make([]any, 0, 4*len(touches))
	for _, to := range touches {
		seen, beat, ended := row.Nanos(to.LastSeenAt), to.LastInteractionBeat, row.Nanos(to.SessionEndedAt)
		if i, ok := latest[to.AgentID]; ok {
			rows[4*i+1], rows[4*i+2] = max(rows[4*i+1].(int64), seen), max(rows[4*i+2].(int64), beat)
			rows[4*i+3] = max(rows[4*i+3].(int64), ended)
			continue
		}
		latest[to.AgentID] = len(rows) / 4
		rows = append(rows, to.AgentID, seen, beat, ended)
	}
	g := x.Dialect.Greatest
	return x.DB.ExecRows(Batch{What: "touch agents",
		Head: `UPDATE agents SET last_seen_at = ` + g + `(last_seen_at, v.column2), last_interaction_beat = ` + g + `(last_interaction_beat, v.column3),
		session_ended_at = ` + g + `(session_ended_at, v.column4) FROM (`,
		Tail:  `) AS v WHERE agents.id = v.column1`,
		Types: []string{"bigint", "bigint", "bigint", "bigint"}}, rows, nil)
}
