package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// MarkDelivered implements hub.ReceiptTx.
func (t *Tx) MarkDelivered(agentID int64, ids []int64, at time.Time) error {
	_, err := t.exec(`UPDATE deliveries SET delivered_at = ? WHERE agent_id = ? AND delivered_at = 0
		AND message_id IN (SELECT value FROM json_each(?))`, row.Nanos(at), agentID, idList(ids))
	return err
}

// MarkInContext implements hub.ReceiptTx.
func (t *Tx) MarkInContext(agentID int64, ids []int64, at time.Time, via hub.Via) error {
	_, err := t.exec(`UPDATE deliveries SET in_context_at = ?1, via = ?2, delivered_at = CASE WHEN delivered_at = 0 THEN ?1 ELSE delivered_at END
		WHERE agent_id = ?3 AND in_context_at = 0 AND message_id IN (SELECT value FROM json_each(?4))`, row.Nanos(at), int64(via), agentID, idList(ids))
	return err
}

// DeliveredTo implements hub.ReceiptTx.
func (t *Tx) DeliveredTo(agentID int64, ids []int64) ([]int64, error) {
	return queryColumn[int64](t, `SELECT message_id FROM deliveries WHERE agent_id = ? AND message_id IN (SELECT value FROM json_each(?))`, agentID, idList(ids))
}

// HoldDeliveries implements hub.ReceiptTx.
func (t *Tx) HoldDeliveries(agentID int64, ids []int64) error {
	_, err := t.exec(`UPDATE deliveries SET held = 1 WHERE agent_id = ? AND held = 0 AND in_context_at = 0
		AND message_id IN (SELECT value FROM json_each(?))`, agentID, idList(ids))
	return err
}

// Acknowledge implements hub.ReceiptTx.
func (t *Tx) Acknowledge(agentID, messageID int64, at time.Time) (time.Time, bool, error) {
	var acked int64
	err := t.queryRow(`SELECT acked_at FROM deliveries WHERE agent_id = ? AND message_id = ?`, agentID, messageID).Scan(&acked)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, hub.NoDelivery(messageID, agentID)
	}
	if err != nil || acked != 0 {
		return row.Time(acked), false, err
	}
	_, err = t.exec(`UPDATE deliveries SET acked_at = ?, delivered_at = CASE WHEN delivered_at = 0 THEN ? ELSE delivered_at END
		WHERE agent_id = ? AND message_id = ?`, row.Nanos(at), row.Nanos(at), agentID, messageID)
	return at, err == nil, err
}

// RecordRead implements hub.ReceiptTx.
func (t *Tx) RecordRead(agentID, upTo int64, at time.Time) error {
	_, err := t.exec(`INSERT INTO read_marks (agent_id, up_to, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, agentID, upTo, row.Nanos(at))
	return err
}

// Receipts implements hub.ReceiptTx: one row per delivery, each read time
// found by one step of the read_marks key.
func (t *Tx) Receipts(messageID int64) ([]hub.Receipt, error) {
	return scanAll(t, row.Receipt, `SELECT d.agent_id, a.name, d.mention, d.delivered_at, a.read_up_to >= d.message_id,
			COALESCE((SELECT r.at FROM read_marks r WHERE r.agent_id = d.agent_id AND r.up_to >= d.message_id ORDER BY r.up_to LIMIT 1), 0),
			d.acked_at, d.in_context_at, d.via
		FROM deliveries d JOIN agents a ON a.id = d.agent_id
		WHERE d.message_id = ? ORDER BY a.name`, messageID)
}

// OverdueAcks implements hub.ReceiptTx.
func (t *Tx) OverdueAcks(cutoff, now time.Time, limit int) ([]hub.PendingAck, error) {
	return scanAll(t, row.PendingAck, `SELECT d.agent_id, a.name, a.locale, d.message_id, m.sender, m.created_at
		FROM deliveries d JOIN messages m ON m.id = d.message_id JOIN agents a ON a.id = d.agent_id
		WHERE d.ack_required = 1 AND d.acked_at = 0 AND d.ack_nudged_at = 0 AND m.created_at <= ? AND a.disabled_at = 0
		AND NOT EXISTS (SELECT 1 FROM deep_work w
			WHERE w.agent_id = d.agent_id AND w.state = 'active' AND w.mode = 'strict' AND w.ends_at > ?)
		ORDER BY d.agent_id, d.message_id LIMIT ?`, row.Nanos(cutoff), row.Nanos(now), limit)
}

// RecordAckNudges implements hub.ReceiptTx.
func (t *Tx) RecordAckNudges(agentID int64, ids []int64, at time.Time) error {
	res, err := t.exec(`UPDATE deliveries SET ack_nudged_at = ? WHERE agent_id = ? AND ack_nudged_at = 0
		AND message_id IN (SELECT value FROM json_each(?))`, row.Nanos(at), agentID, idList(ids))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(ids)) {
		return fmt.Errorf("record acknowledgement nudges: %d of %d deliveries marked (%v)", n, len(ids), err)
	}
	return nil
}
