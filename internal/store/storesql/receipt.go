package storesql

import (
	"fmt"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.ReceiptTx.

// MarkDelivered implements hub.ReceiptTx.
func (x Statements) MarkDelivered(agentID int64, ids []int64, at time.Time) error {
	_, err := x.DB.Exec(`UPDATE deliveries SET delivered_at = ? WHERE agent_id = ? AND delivered_at = 0 AND `+x.Dialect.InIDs("message_id"),
		row.Nanos(at), agentID, x.Dialect.IDs(ids))
	return err
}

// MarkInContext implements hub.ReceiptTx.
func (x Statements) MarkInContext(agentID int64, ids []int64, at time.Time, via hub.Via) error {
	_, err := x.DB.Exec(`UPDATE deliveries SET in_context_at = ?, via = ?, delivered_at = CASE WHEN delivered_at = 0 THEN ? ELSE delivered_at END
		WHERE agent_id = ? AND in_context_at = 0 AND `+x.Dialect.InIDs("message_id"), row.Nanos(at), int64(via), row.Nanos(at), agentID, x.Dialect.IDs(ids))
	return err
}

// DeliveredTo implements hub.ReceiptTx.
func (x Statements) DeliveredTo(agentID int64, ids []int64) ([]int64, error) {
	return column[int64](x.DB, `SELECT message_id FROM deliveries WHERE agent_id = ? AND `+x.Dialect.InIDs("message_id"), agentID, x.Dialect.IDs(ids))
}

// HoldDeliveries implements hub.ReceiptTx.
func (x Statements) HoldDeliveries(agentID int64, ids []int64) error {
	_, err := x.DB.Exec(`UPDATE deliveries SET held = 1 WHERE agent_id = ? AND held = 0 AND in_context_at = 0
		AND `+x.Dialect.InIDs("message_id"), agentID, x.Dialect.IDs(ids))
	return err
}

// Acknowledge implements hub.ReceiptTx.
func (x Statements) Acknowledge(agentID, messageID int64, at time.Time) (time.Time, bool, error) {
	var acked int64
	err := x.DB.QueryRow(`SELECT acked_at FROM deliveries WHERE agent_id = ? AND message_id = ?`, agentID, messageID).Scan(&acked)
	if x.DB.IsNoRows(err) {
		return time.Time{}, false, hub.NoDelivery(messageID, agentID)
	}
	if err != nil || acked != 0 {
		return row.Time(acked), false, err
	}
	_, err = x.DB.Exec(`UPDATE deliveries SET acked_at = ?, delivered_at = CASE WHEN delivered_at = 0 THEN ? ELSE delivered_at END
		WHERE agent_id = ? AND message_id = ?`, row.Nanos(at), row.Nanos(at), agentID, messageID)
	return at, err == nil, err
}

// RecordRead implements hub.ReceiptTx.
func (x Statements) RecordRead(agentID, upTo int64, at time.Time) error {
	_, err := x.DB.Exec(`INSERT INTO read_marks (agent_id, up_to, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, agentID, upTo, row.Nanos(at))
	return err
}

// Receipts implements hub.ReceiptTx: one row per delivery, each read time
// found by one step of the read_marks key.
func (x Statements) Receipts(messageID int64) ([]hub.Receipt, error) {
	return all(x.DB, row.Receipt, `SELECT d.agent_id, a.name, d.mention, d.delivered_at, a.read_up_to >= d.message_id,
			COALESCE((SELECT r.at FROM read_marks r WHERE r.agent_id = d.agent_id AND r.up_to >= d.message_id ORDER BY r.up_to LIMIT 1), 0),
			d.acked_at, d.in_context_at, d.via
		FROM deliveries d JOIN agents a ON a.id = d.agent_id
		WHERE d.message_id = ? ORDER BY a.name`, messageID)
}

// OverdueAcks implements hub.ReceiptTx.
func (x Statements) OverdueAcks(cutoff, now time.Time, limit int) ([]hub.PendingAck, error) {
	return all(x.DB, row.PendingAck, `SELECT d.agent_id, a.name, a.locale, d.message_id, m.sender, m.created_at
		FROM deliveries d JOIN messages m ON m.id = d.message_id JOIN agents a ON a.id = d.agent_id
		WHERE d.ack_required = `+x.Dialect.True+` AND d.acked_at = 0 AND d.ack_nudged_at = 0 AND m.created_at <= ? AND a.disabled_at = 0
		AND NOT EXISTS (SELECT 1 FROM deep_work w
			WHERE w.agent_id = d.agent_id AND w.state = 'active' AND w.mode = 'strict' AND w.ends_at > ?)
		ORDER BY d.agent_id, d.message_id LIMIT ?`, row.Nanos(cutoff), row.Nanos(now), limit)
}

// RecordAckNudges implements hub.ReceiptTx.
func (x Statements) RecordAckNudges(agentID int64, ids []int64, at time.Time) error {
	n, err := x.DB.Exec(`UPDATE deliveries SET ack_nudged_at = ? WHERE agent_id = ? AND ack_nudged_at = 0 AND `+x.Dialect.InIDs("message_id"),
		row.Nanos(at), agentID, x.Dialect.IDs(ids))
	if err != nil {
		return err
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("record acknowledgement nudges: %d of %d deliveries marked", n, len(ids))
	}
	return nil
}
