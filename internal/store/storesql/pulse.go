package storesql

import (
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.PulseTx.

const pulseFrom = `SELECT ` + row.PulseColumns + ` FROM pulses p JOIN agents a ON a.id = p.agent_id `

// PutPulseConfig implements hub.PulseTx.
func (x Statements) PutPulseConfig(c hub.PulseConfig, nextCheckAt time.Time) error {
	_, err := x.DB.Exec(`INSERT INTO pulses (agent_id, enabled, interval_ns, active_hours, time_zone, instructions, output_channel, updated_at, next_check_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled, interval_ns = excluded.interval_ns,
			active_hours = excluded.active_hours, time_zone = excluded.time_zone, instructions = excluded.instructions,
			output_channel = excluded.output_channel, updated_at = excluded.updated_at, next_check_at = excluded.next_check_at`,
		c.AgentID, c.Enabled, int64(c.Interval), c.ActiveHours, c.TimeZone, c.Instructions, c.OutputChannel,
		row.Nanos(c.UpdatedAt), row.Nanos(nextCheckAt))
	return err
}

// RecordPulse implements hub.PulseTx: it reports whether pulse n of the
// agent was not recorded yet, and prunes the agent's records older than
// hub.SentKept when it records one.
func (x Statements) RecordPulse(agentID, n int64, at time.Time) (bool, error) {
	added, err := x.DB.Exec(`INSERT INTO pulses_sent (agent_id, n, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, agentID, n, row.Nanos(at))
	if err != nil || added == 0 {
		return false, err
	}
	_, err = x.DB.Exec(`DELETE FROM pulses_sent WHERE agent_id = ? AND sent_at < ?`, agentID, row.Nanos(at.Add(-hub.SentKept)))
	return true, err
}

// Pulse implements hub.PulseTx.
func (x Statements) Pulse(agentID int64) (*hub.Pulse, error) {
	p, err := row.Pulse(x.DB.QueryRow(pulseFrom+`WHERE p.agent_id = ?`, agentID))
	if x.DB.IsNoRows(err) {
		return nil, hub.NoPulse()
	}
	return p, err
}

// Pulses implements hub.PulseTx.
func (x Statements) Pulses() ([]*hub.Pulse, error) {
	return all(x.DB, row.Pulse, pulseFrom+`ORDER BY a.name`)
}

// DuePulses implements hub.PulseTx.
func (x Statements) DuePulses(now time.Time, limit int) ([]int64, error) {
	return column[int64](x.DB, `SELECT agent_id FROM pulses WHERE enabled = `+x.Dialect.True+` AND next_check_at > 0 AND next_check_at <= ?
		ORDER BY next_check_at LIMIT ?`, row.Nanos(now), limit)
}

// PutPulseState implements hub.PulseTx.
func (x Statements) PutPulseState(st hub.PulseState, nextCheckAt time.Time) error {
	n, err := x.DB.Exec(`UPDATE pulses SET last_pulse_at = ?, unanswered = ?, last_output = ?, last_outcome = ?, last_respond_at = ?,
		pulse_count = ?, last_reason = ?, last_checked_at = ?, next_check_at = ? WHERE agent_id = ?`,
		row.Nanos(st.LastPulseAt), st.Unanswered, st.LastOutput, st.LastOutcome, row.Nanos(st.LastRespondAt),
		st.PulseCount, st.LastReason, row.Nanos(st.LastCheckedAt), row.Nanos(nextCheckAt), st.AgentID)
	if err != nil {
		return err
	}
	if n == 0 {
		return hub.NoPulse()
	}
	return nil
}
