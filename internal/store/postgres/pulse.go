package postgres

import (
	"errors"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
	"github.com/jackc/pgx/v5"
)

// This file implements hub.PulseTx.

// PutPulseConfig implements hub.PulseTx.
func (t *Tx) PutPulseConfig(c hub.PulseConfig, nextCheckAt time.Time) error {
	_, err := t.exec(`INSERT INTO pulses (agent_id, enabled, interval_ns, active_hours, time_zone, instructions, output_channel, updated_at, next_check_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (agent_id) DO UPDATE SET enabled = excluded.enabled, interval_ns = excluded.interval_ns,
			active_hours = excluded.active_hours, time_zone = excluded.time_zone, instructions = excluded.instructions,
			output_channel = excluded.output_channel, updated_at = excluded.updated_at, next_check_at = excluded.next_check_at`,
		c.AgentID, c.Enabled, int64(c.Interval), c.ActiveHours, c.TimeZone, c.Instructions, c.OutputChannel,
		row.Nanos(c.UpdatedAt), row.Nanos(nextCheckAt))
	return err
}

// RecordPulse implements hub.PulseTx.
func (t *Tx) RecordPulse(agentID, n int64, at time.Time) (bool, error) {
	return t.recordSent(`INSERT INTO pulses_sent (agent_id, n, sent_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		[]any{agentID, n, row.Nanos(at)}, `DELETE FROM pulses_sent WHERE agent_id = $1 AND sent_at < $2`, agentID, at)
}

// recordSent runs insert, which ignores a duplicate key, and reports
// whether it added a row; if it did, prune (given agentID and a time)
// deletes the agent's records older than hub.SentKept.
func (t *Tx) recordSent(insert string, args []any, prune string, agentID int64, at time.Time) (bool, error) {
	tag, err := t.exec(insert, args...)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = t.exec(prune, agentID, row.Nanos(at.Add(-hub.SentKept)))
	return true, err
}

// Pulse implements hub.PulseTx.
func (t *Tx) Pulse(agentID int64) (*hub.Pulse, error) {
	p, err := row.Pulse(t.queryRow(`SELECT `+row.PulseColumns+` FROM pulses p JOIN agents a ON a.id = p.agent_id WHERE p.agent_id = $1`, agentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hub.NoPulse()
	}
	return p, err
}

// ListPulses implements hub.PulseTx.
func (t *Tx) ListPulses() ([]*hub.Pulse, error) {
	rows, err := t.query(`SELECT ` + row.PulseColumns + ` FROM pulses p JOIN agents a ON a.id = p.agent_id ORDER BY a.name`)
	return scanRows(rows, err, func(r pgx.Rows) (*hub.Pulse, error) { return row.Pulse(r) })
}

// DuePulses implements hub.PulseTx.
func (t *Tx) DuePulses(now time.Time, limit int) ([]int64, error) {
	return queryColumn[int64](t, `SELECT agent_id FROM pulses WHERE enabled AND next_check_at > 0 AND next_check_at <= $1
		ORDER BY next_check_at LIMIT $2`, row.Nanos(now), limit)
}

// PutPulseState implements hub.PulseTx.
func (t *Tx) PutPulseState(st hub.PulseState, nextCheckAt time.Time) error {
	tag, err := t.exec(`UPDATE pulses SET last_pulse_at = $1, unanswered = $2, last_output = $3, last_outcome = $4, last_respond_at = $5,
		pulse_count = $6, last_reason = $7, last_checked_at = $8, next_check_at = $9 WHERE agent_id = $10`,
		row.Nanos(st.LastPulseAt), st.Unanswered, st.LastOutput, st.LastOutcome, row.Nanos(st.LastRespondAt),
		st.PulseCount, st.LastReason, row.Nanos(st.LastCheckedAt), row.Nanos(nextCheckAt), st.AgentID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hub.NoPulse()
	}
	return nil
}
