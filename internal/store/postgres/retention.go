package postgres

import (
	"time"

	"github.com/agenthub/hub/internal/store/row"
)

// DeleteMessagesBefore implements hub.RetentionTx: the oldest messages come
// first in ID order, so the scan stops after limit rows; deliveries go by
// cascade.
func (t *Tx) DeleteMessagesBefore(before time.Time, limit int) (int64, error) {
	tag, err := t.exec(`DELETE FROM messages WHERE id IN (
		SELECT id FROM messages WHERE created_at < $1 ORDER BY id LIMIT $2)`, row.Nanos(before), limit)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
