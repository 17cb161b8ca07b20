package postgres

import (
	"errors"
	"strconv"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.AgentTx.

func (t *Tx) agentWhere(notFound func() error, where string, arg any) (*hub.Agent, error) {
	a, err := row.Agent(t.queryRow(`SELECT `+row.AgentColumns+` FROM agents WHERE `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound()
	}
	return a, err
}

// CreateAgent implements hub.AgentTx. A taken name or token is reported
// without aborting the transaction (ON CONFLICT DO NOTHING).
func (t *Tx) CreateAgent(a *hub.Agent, tokenHash []byte) error {
	err := t.queryRow(`INSERT INTO agents (name, display_name, role, description, locale, token_hash, created_at, disabled_at,
		current_heartbeat_id, heartbeat_started_at, read_up_to, last_seen_at, last_interaction_beat, project)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING RETURNING id`,
		a.Name, a.DisplayName, a.Role, a.Description, a.Locale, tokenHash, row.Nanos(a.CreatedAt), row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, hub.ProjectOr(a.Project)).Scan(&a.ID)
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if _, err := t.AgentByName(a.Name); err == nil {
		return hub.AgentNameTaken(a.Name)
	}
	return hub.TokenTaken()
}

// AgentByName implements hub.AgentTx.
func (t *Tx) AgentByName(name string) (*hub.Agent, error) {
	return t.agentWhere(func() error { return hub.NoAgentNamed(name) }, `name = $1`, name)
}

// AddresseeByName implements hub.AgentTx.
func (t *Tx) AddresseeByName(name string) (hub.Addressee, error) {
	a := hub.Addressee{Name: name}
	var disabledAt int64
	err := t.queryRow(`SELECT id, project, disabled_at FROM agents WHERE name = $1`, name).Scan(&a.ID, &a.Project, &disabledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return hub.Addressee{}, hub.NoAgentNamed(name)
	}
	a.Disabled = disabledAt != 0
	return a, err
}

// AgentByID implements hub.AgentTx. Under the shared write lock it locks
// the agent's row until commit (FOR NO KEY UPDATE: posts that deliver to
// the agent, whose foreign keys take KEY SHARE, do not wait for it), so
// that an UpdateAgent of the row read here loses no concurrent update.
func (t *Tx) AgentByID(id int64) (*hub.Agent, error) {
	if !t.shared {
		return t.agentWhere(hub.NoAgentWithID, `id = $1`, id)
	}
	a, err := t.agentWhere(hub.NoAgentWithID, `id = $1 FOR NO KEY UPDATE`, id)
	if err == nil {
		if t.locked == nil {
			t.locked = map[int64]lockedAgent{}
		}
		t.locked[id] = lockedAgent{readUpTo: a.ReadUpTo, disabledAt: row.Nanos(a.DisabledAt)}
	}
	return a, err
}

// lockedAgent is what UpdateAgent compares with under the shared write
// lock: an agent's row as AgentByID read and locked it.
type lockedAgent struct{ readUpTo, disabledAt int64 }

// AgentByTokenHash implements hub.AgentTx.
func (t *Tx) AgentByTokenHash(hash []byte) (*hub.Agent, error) {
	return t.agentWhere(hub.NoAgentWithToken, `token_hash = $1`, hash)
}

// ListAgents implements hub.AgentTx.
func (t *Tx) ListAgents(includeDisabled bool) ([]*hub.Agent, error) {
	rows, err := t.query(`SELECT `+row.AgentColumns+` FROM agents WHERE $1 OR disabled_at = 0 ORDER BY name`, includeDisabled)
	scan := row.NewAgentScan()
	return scanRows(rows, err, func(r pgx.Rows) (*hub.Agent, error) { return scan.Scan(r) })
}

// CountAgents implements hub.AgentTx.
func (t *Tx) CountAgents() (int64, error) {
	var n int64
	err := t.queryRow(`SELECT COUNT(*) FROM agents`).Scan(&n)
	return n, err
}

// UpdateAgent implements hub.AgentTx. Disabling or enabling an agent is
// announced to every replica (see agentChanged); the other fields change
// too often and matter too little to be announced.
//
// Under the shared write lock it writes only a row that AgentByID locked,
// and neither its read cursor nor its enabled state: moving the cursor
// moves the agent's unread counters (0004_inbox_counts.sql), which must not
// change while another replica's post delivers to it, and disabling stops
// deliveries. Either runs under the exclusive lock.
func (t *Tx) UpdateAgent(a *hub.Agent) error {
	w := needsLock
	if was, ok := t.locked[a.ID]; ok && was.readUpTo == a.ReadUpTo && was.disabledAt == row.Nanos(a.DisabledAt) {
		w = sharedSafe
	}
	var toggled bool
	err := t.queryRowAs(w, `UPDATE agents SET display_name = $1, role = $2, description = $3, locale = $4, disabled_at = $5,
		current_heartbeat_id = $6, heartbeat_started_at = $7, read_up_to = $8, last_seen_at = $9, last_interaction_beat = $10
		FROM agents old WHERE agents.id = $11 AND old.id = agents.id
		RETURNING old.disabled_at IS DISTINCT FROM agents.disabled_at`,
		a.DisplayName, a.Role, a.Description, a.Locale, row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, a.ID).Scan(&toggled)
	if errors.Is(err, pgx.ErrNoRows) {
		return hub.NoAgentNamed(a.Name)
	} else if err != nil || !toggled {
		return err
	}
	if a.Disabled() {
		return t.agentChanged(a.ID, hub.AgentDisabled)
	}
	return t.agentChanged(a.ID, hub.AgentEnabled)
}

// SetAgentToken implements hub.AgentTx. A token another agent holds is
// reported without aborting the transaction.
func (t *Tx) SetAgentToken(agentID int64, hash []byte) error {
	tag, err := t.exec(`UPDATE agents SET token_hash = $1 WHERE id = $2
		AND NOT EXISTS (SELECT 1 FROM agents WHERE token_hash = $1 AND id <> $2)`, hash, agentID)
	if err == nil && tag.RowsAffected() == 0 && hash != nil {
		var taken bool
		if err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM agents WHERE token_hash = $1 AND id <> $2)`, hash, agentID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return hub.TokenTaken()
		}
	}
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	return t.agentChanged(agentID, hub.TokenChanged)
}

// agentChanged NOTIFYs every replica (this one included) that the agent's
// token or state changed, so that each forgets the agents it cached for
// authentication and ends the agent's parked waits (Watch). PostgreSQL
// delivers it at commit, never for a rolled-back change. The payload is
// "CHANGE:ID" (changeNames).
func (t *Tx) agentChanged(id int64, change hub.AgentChange) error {
	_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.changed, changeNames[change]+":"+strconv.FormatInt(id, 10))
	return err
}

// TouchAgents implements hub.AgentTx: one statement for all the touches,
// each agent once with its latest values, never moving a time back.
func (t *Tx) TouchAgents(touches []hub.Touch) error {
	if len(touches) == 0 {
		return nil
	}
	latest := make(map[int64]int, len(touches)) // agent → its index in the arrays
	var ids, seen, beats, ended []int64
	for _, to := range touches {
		s, e := row.Nanos(to.LastSeenAt), row.Nanos(to.SessionEndedAt)
		if i, ok := latest[to.AgentID]; ok {
			seen[i], beats[i], ended[i] = max(seen[i], s), max(beats[i], to.LastInteractionBeat), max(ended[i], e)
			continue
		}
		latest[to.AgentID] = len(ids)
		ids, seen, beats, ended = append(ids, to.AgentID), append(seen, s), append(beats, to.LastInteractionBeat), append(ended, e)
	}
	_, err := t.exec(`UPDATE agents SET last_seen_at = GREATEST(last_seen_at, v.seen),
		last_interaction_beat = GREATEST(last_interaction_beat, v.beat), session_ended_at = GREATEST(session_ended_at, v.ended)
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS v(id, seen, beat, ended) WHERE agents.id = v.id`, ids, seen, beats, ended)
	return err
}
