package storesql

import (
	"time"

	"github.com/agenthub/hub/internal/store/row"
)

// This file implements hub.RetentionTx.

// DeleteMessagesBefore implements hub.RetentionTx: the oldest messages come
// first in ID order, so the scan stops after limit rows; deliveries go by
// cascade, and the read marks that covered only deleted messages.
func (x Statements) DeleteMessagesBefore(before time.Time, limit int) (int64, error) {
	n, err := x.DB.Exec(`DELETE FROM messages WHERE id IN (
		SELECT id FROM messages WHERE created_at < ? ORDER BY id LIMIT ?)`, row.Nanos(before), limit)
	if err != nil || n == 0 {
		return n, err
	}
	// The read marks below every message left cover nothing any more.
	_, err = x.DB.Exec(`DELETE FROM read_marks WHERE at < ? AND up_to < (SELECT COALESCE(MIN(id), 9223372036854775807) FROM messages)`, row.Nanos(before))
	return n, err
}
