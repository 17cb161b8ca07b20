package sqlite

import "time"

// DeleteMessagesBefore implements hub.RetentionTx. The oldest messages come
// first in ID order, so the scan stops after limit rows; deliveries go by
// cascade.
func (t *Tx) DeleteMessagesBefore(before time.Time, limit int) (int64, error) {
	res, err := t.exec(`DELETE FROM messages WHERE id IN (
		SELECT id FROM messages WHERE created_at < ? ORDER BY id LIMIT ?)`, toNanos(before), limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
