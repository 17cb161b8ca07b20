package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.InjectionTx.

// InjectionState implements hub.InjectionTx.
func (x Statements) InjectionState(agentID int64) (*hub.InjectionState, error) {
	st := &hub.InjectionState{AgentID: agentID}
	var updated int64
	err := x.DB.QueryRow(`SELECT up_to, stop_holds, updated_at FROM injections WHERE agent_id = ?`, agentID).
		Scan(&st.UpTo, &st.StopHolds, &updated)
	if x.DB.IsNoRows(err) {
		return st, nil
	}
	st.UpdatedAt = row.Time(updated)
	return st, err
}

// PutInjectionState implements hub.InjectionTx.
func (x Statements) PutInjectionState(st hub.InjectionState) error {
	_, err := x.DB.Exec(`INSERT INTO injections (agent_id, up_to, stop_holds, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET up_to = excluded.up_to, stop_holds = excluded.stop_holds, updated_at = excluded.updated_at`,
		st.AgentID, st.UpTo, st.StopHolds, row.Nanos(st.UpdatedAt))
	return err
}
