package postgres

import (
	"time"

	"github.com/agenthub/hub/internal/store/row"
)

// DeleteMessagesBefore implements hub.RetentionTx: the oldest messages come
// first in ID order, so the scan stops after limit rows; deliveries go by
// cascade, and the read marks that covered only deleted messages.
func (t *Tx) DeleteMessagesBefore(before time.Time, limit int) (int64, error) {
	tag, err := t.exec(`DELETE FROM messages WHERE id IN (
		SELECT id FROM messages WHERE created_at < $1 ORDER BY id LIMIT $2)`, row.Nanos(before), limit)
	if err != nil {
		return 0, err
	}
	n := tag.RowsAffected()
	if n == 0 {
		return 0, nil
	}
	// The read marks below every message left cover nothing any more.
	_, err = t.exec(`DELETE FROM read_marks WHERE at < $1 AND up_to < (SELECT COALESCE(MIN(id), 9223372036854775807) FROM messages)`, row.Nanos(before))
	return n, err
}
