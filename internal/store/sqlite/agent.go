package sqlite

import (
	"database/sql"
	"errors"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

func (t *Tx) agentWhere(notFound func() error, where string, arg any) (*hub.Agent, error) {
	a, err := row.Agent(t.queryRow(`SELECT `+row.AgentColumns+` FROM agents WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound()
	}
	return a, err
}

// CreateAgent implements hub.AgentTx.
func (t *Tx) CreateAgent(a *hub.Agent, tokenHash []byte) error {
	res, err := t.exec(`INSERT INTO agents (name, display_name, role, description, locale, token_hash, created_at, disabled_at,
		current_heartbeat_id, heartbeat_started_at, read_up_to, last_seen_at, last_interaction_beat, project)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Name, a.DisplayName, a.Role, a.Description, a.Locale, tokenHash, row.Nanos(a.CreatedAt), row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, hub.ProjectOr(a.Project))
	if hub.ErrorCode(err) == hub.ECONFLICT {
		return hub.AgentNameTaken(a.Name)
	} else if err != nil {
		return err
	}
	a.ID, err = res.LastInsertId()
	return err
}

// AgentByName implements hub.AgentTx.
func (t *Tx) AgentByName(name string) (*hub.Agent, error) {
	return t.agentWhere(func() error { return hub.NoAgentNamed(name) }, `name = ?`, name)
}

// AgentByID implements hub.AgentTx.
func (t *Tx) AgentByID(id int64) (*hub.Agent, error) {
	return t.agentWhere(hub.NoAgentWithID, `id = ?`, id)
}

// AgentByTokenHash implements hub.AgentTx.
func (t *Tx) AgentByTokenHash(hash []byte) (*hub.Agent, error) {
	a, err := t.agentWhere(hub.NoAgentWithToken, `token_hash = ?`, hash)
	return a, err
}

// ListAgents implements hub.AgentTx.
func (t *Tx) ListAgents(includeDisabled bool) ([]*hub.Agent, error) {
	q := `SELECT ` + row.AgentColumns + ` FROM agents`
	if !includeDisabled {
		q += ` WHERE disabled_at = 0`
	}
	rows, err := t.query(q + ` ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var as []*hub.Agent
	scan := row.NewAgentScan()
	for rows.Next() {
		a, err := scan.Scan(rows)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return as, rows.Err()
}

// CountAgents implements hub.AgentTx.
func (t *Tx) CountAgents() (int64, error) {
	var n int64
	err := t.queryRow(`SELECT COUNT(*) FROM agents`).Scan(&n)
	return n, err
}

// UpdateAgent implements hub.AgentTx.
func (t *Tx) UpdateAgent(a *hub.Agent) error {
	res, err := t.exec(`UPDATE agents SET display_name = ?, role = ?, description = ?, locale = ?, disabled_at = ?,
		current_heartbeat_id = ?, heartbeat_started_at = ?, read_up_to = ?, last_seen_at = ?, last_interaction_beat = ?
		WHERE id = ?`,
		a.DisplayName, a.Role, a.Description, a.Locale, row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, a.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.NoAgentNamed(a.Name)
	}
	return nil
}

// SetAgentToken implements hub.AgentTx.
func (t *Tx) SetAgentToken(agentID int64, hash []byte) error {
	_, err := t.exec(`UPDATE agents SET token_hash = ? WHERE id = ?`, hash, agentID)
	return err
}

// TouchAgents implements hub.AgentTx. The orchestrator flushes every
// caller of the last tick, so the touches are written in multi-row
// statements (execRows), each agent once with its latest values.
func (t *Tx) TouchAgents(touches []hub.Touch) error {
	latest := make(map[int64]int, len(touches)) // agent → its row in args
	args := make([]any, 0, 4*len(touches))
	for _, to := range touches {
		seen, beat, ended := row.Nanos(to.LastSeenAt), to.LastInteractionBeat, row.Nanos(to.SessionEndedAt)
		if i, ok := latest[to.AgentID]; ok {
			args[4*i+1], args[4*i+2] = max(args[4*i+1].(int64), seen), max(args[4*i+2].(int64), beat)
			args[4*i+3] = max(args[4*i+3].(int64), ended)
			continue
		}
		latest[to.AgentID] = len(args) / 4
		args = append(args, to.AgentID, seen, beat, ended)
	}
	return t.execRows("touch agents", `UPDATE agents SET last_seen_at = MAX(last_seen_at, v.column2),
		last_interaction_beat = MAX(last_interaction_beat, v.column3), session_ended_at = MAX(session_ended_at, v.column4) FROM (VALUES `,
		`) AS v WHERE agents.id = v.column1`, 4, args, nil)
}
