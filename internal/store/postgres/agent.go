package postgres

import (
	"errors"
	"strconv"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements what PostgreSQL adds to hub.AgentTx (storesql
// implements the rest): the row lock of a read-modify-write of an agent
// and a heartbeat's write under the shared write lock, and the
// announcement of changed agents to every replica.

// AgentByID implements hub.AgentTx. Under the shared write lock it locks
// the agent's row until commit (FOR NO KEY UPDATE: posts that deliver to
// the agent, whose foreign keys take KEY SHARE, do not wait for it), so
// that an UpdateAgent of the row read here loses no concurrent update.
func (t *Tx) AgentByID(id int64) (*hub.Agent, error) {
	if !t.shared {
		return t.Statements.AgentByID(id)
	}
	a, err := t.AgentWhere(hub.NoAgentWithID, `id = ? FOR NO KEY UPDATE`, id)
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

// UpdateAgent implements hub.AgentTx. Disabling or enabling an agent, or
// changing its profile (display name, role, description, locale: what a
// replica's authentication caches and its calls read), is announced to
// every replica (see agentChanged); the other fields change too often and
// are read from the store by the calls that need them.
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
	var toggled, profiled bool
	err := t.queryRowAs(w, `UPDATE agents SET display_name = $1, role = $2, description = $3, locale = $4, disabled_at = $5,
		current_heartbeat_id = $6, heartbeat_started_at = $7, read_up_to = $8, last_seen_at = $9, last_interaction_beat = $10
		FROM agents old WHERE agents.id = $11 AND old.id = agents.id
		RETURNING old.disabled_at IS DISTINCT FROM agents.disabled_at,
			(old.display_name, old.role, old.description, old.locale) IS DISTINCT FROM (agents.display_name, agents.role, agents.description, agents.locale)`,
		a.DisplayName, a.Role, a.Description, a.Locale, row.Nanos(a.DisabledAt),
		a.CurrentHeartbeatID, row.Nanos(a.HeartbeatStartedAt), a.ReadUpTo, row.Nanos(a.LastSeenAt), a.LastInteractionBeat, a.ID).Scan(&toggled, &profiled)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return hub.NoAgentNamed(a.Name)
	case err != nil:
		return err
	case toggled && a.Disabled():
		return t.agentChanged(a.ID, hub.AgentDisabled)
	case toggled:
		return t.agentChanged(a.ID, hub.AgentEnabled)
	case profiled:
		return t.agentChanged(a.ID, 0)
	}
	return nil
}

// StartHeartbeat implements hub.AgentTx. Its UPDATE writes only the
// heartbeat's columns of the agent's row, neither its read cursor nor its
// enabled state, and locks the row itself: it runs under the shared write
// lock.
func (t *Tx) StartHeartbeat(agentID int64, id string, startedAt time.Time) (unread, mentions int64, err error) {
	s := t.Statements
	s.DB = taskDB{t: t, w: sharedSafe}
	return s.StartHeartbeat(agentID, id, startedAt)
}

// agentChanged NOTIFYs every replica (this one included) that the agent's
// token, state or profile changed, so that each forgets the agents it cached for
// authentication and ends the agent's parked waits (Watch). PostgreSQL
// delivers it at commit, never for a rolled-back change. The payload is
// "CHANGE:ID" (changeNames).
func (t *Tx) agentChanged(id int64, change hub.AgentChange) error {
	_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.changed, changeNames[change]+":"+strconv.FormatInt(id, 10))
	return err
}
