package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.InjectionTx.

// InjectionState implements hub.InjectionTx: the agent's row, its state
// and its newest delivery (inbox_counts), in one statement.
func (x Statements) InjectionState(agentID int64) (*hub.InjectionState, int64, int64, error) {
	st := &hub.InjectionState{AgentID: agentID}
	var readUpTo, latest, updated int64
	err := x.DB.QueryRow(`SELECT a.read_up_to, COALESCE(c.latest, 0), COALESCE(i.up_to, 0), COALESCE(i.stop_holds, 0), COALESCE(i.updated_at, 0)
		FROM agents a LEFT JOIN inbox_counts c ON c.agent_id = a.id LEFT JOIN injections i ON i.agent_id = a.id WHERE a.id = ?`, agentID).
		Scan(&readUpTo, &latest, &st.UpTo, &st.StopHolds, &updated)
	if x.DB.IsNoRows(err) {
		return nil, 0, 0, hub.NoAgentWithID()
	} else if err != nil {
		return nil, 0, 0, err
	}
	st.UpdatedAt = row.Time(updated)
	return st, readUpTo, latest, nil
}

// PutInjectionState implements hub.InjectionTx.
func (x Statements) PutInjectionState(st hub.InjectionState) error {
	_, err := x.DB.Exec(`INSERT INTO injections (agent_id, up_to, stop_holds, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET up_to = excluded.up_to, stop_holds = excluded.stop_holds, updated_at = excluded.updated_at`,
		st.AgentID, st.UpTo, st.StopHolds, row.Nanos(st.UpdatedAt))
	return err
}
