package sqlite

import (
	"database/sql"
	"errors"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// InjectionState implements hub.InjectionTx.
func (t *Tx) InjectionState(agentID int64) (*hub.InjectionState, error) {
	st := &hub.InjectionState{AgentID: agentID}
	var updated int64
	err := t.queryRow(`SELECT up_to, stop_holds, updated_at FROM injections WHERE agent_id = ?`, agentID).
		Scan(&st.UpTo, &st.StopHolds, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	st.UpdatedAt = row.Time(updated)
	return st, err
}

// PutInjectionState implements hub.InjectionTx.
func (t *Tx) PutInjectionState(st hub.InjectionState) error {
	_, err := t.exec(`INSERT INTO injections (agent_id, up_to, stop_holds, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET up_to = excluded.up_to, stop_holds = excluded.stop_holds, updated_at = excluded.updated_at`,
		st.AgentID, st.UpTo, st.StopHolds, row.Nanos(st.UpdatedAt))
	return err
}
