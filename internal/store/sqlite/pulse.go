package sqlite

import (
	"database/sql"
	"errors"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// PutPulseConfig implements hub.PulseTx.
func (t *Tx) PutPulseConfig(c hub.PulseConfig, nextCheckAt time.Time) error {
	_, err := t.exec(`INSERT INTO pulses (agent_id, enabled, interval_ns, active_hours, time_zone, instructions, output_channel, updated_at, next_check_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled, interval_ns = excluded.interval_ns,
			active_hours = excluded.active_hours, time_zone = excluded.time_zone, instructions = excluded.instructions,
			output_channel = excluded.output_channel, updated_at = excluded.updated_at, next_check_at = excluded.next_check_at`,
		c.AgentID, boolInt(c.Enabled), int64(c.Interval), c.ActiveHours, c.TimeZone, c.Instructions, c.OutputChannel,
		row.Nanos(c.UpdatedAt), row.Nanos(nextCheckAt))
	return err
}

// RecordPulse implements hub.PulseTx.
func (t *Tx) RecordPulse(agentID, n int64, at time.Time) (bool, error) {
	return t.recordSent(`INSERT INTO pulses_sent (agent_id, n, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		[]any{agentID, n, row.Nanos(at)}, `DELETE FROM pulses_sent WHERE agent_id = ? AND sent_at < ?`, agentID, at)
}

// Pulse implements hub.PulseTx.
func (t *Tx) Pulse(agentID int64) (*hub.Pulse, error) {
	p, err := row.Pulse(t.queryRow(`SELECT `+row.PulseColumns+` FROM pulses p JOIN agents a ON a.id = p.agent_id WHERE p.agent_id = ?`, agentID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hub.NoPulse()
	}
	return p, err
}

// ListPulses implements hub.PulseTx.
func (t *Tx) ListPulses() ([]*hub.Pulse, error) {
	rows, err := t.query(`SELECT ` + row.PulseColumns + ` FROM pulses p JOIN agents a ON a.id = p.agent_id ORDER BY a.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hub.Pulse
	for rows.Next() {
		p, err := row.Pulse(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DuePulses implements hub.PulseTx.
func (t *Tx) DuePulses(now time.Time, limit int) ([]int64, error) {
	return queryColumn[int64](t, `SELECT agent_id FROM pulses WHERE enabled = 1 AND next_check_at > 0 AND next_check_at <= ? ORDER BY next_check_at LIMIT ?`,
		row.Nanos(now), limit)
}

// PutPulseState implements hub.PulseTx.
func (t *Tx) PutPulseState(st hub.PulseState, nextCheckAt time.Time) error {
	res, err := t.exec(`UPDATE pulses SET last_pulse_at = ?, unanswered = ?, last_output = ?, last_outcome = ?, last_respond_at = ?,
		pulse_count = ?, last_reason = ?, last_checked_at = ?, next_check_at = ? WHERE agent_id = ?`,
		row.Nanos(st.LastPulseAt), boolInt(st.Unanswered), st.LastOutput, st.LastOutcome, row.Nanos(st.LastRespondAt),
		st.PulseCount, st.LastReason, row.Nanos(st.LastCheckedAt), row.Nanos(nextCheckAt), st.AgentID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hub.NoPulse()
	}
	return nil
}
