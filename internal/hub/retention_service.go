package hub

import (
	"context"
	"time"
)

// PruneBatch is the number of messages one retention write transaction
// deletes.
const PruneBatch = 500

// RetentionTx deletes old data in bounded batches.
type RetentionTx interface {
	// DeleteMessagesBefore deletes at most limit of the oldest messages
	// created before before, with their deliveries, and returns how many.
	DeleteMessagesBefore(before time.Time, limit int) (int64, error)
}

// PruneMessageBatch deletes up to limit of the oldest messages created
// before before, in one write transaction, and returns how many it
// deleted.
func (s *Ops) PruneMessageBatch(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := update(ctx, s.store, func(tx opsTx) error {
		var err error
		n, err = tx.DeleteMessagesBefore(before, limit)
		return err
	})
	return n, err
}

// PruneMessages deletes every message created before before, batch by
// batch, and returns how many it deleted. Errors: EINVALID (a time in the
// future or missing), ctx.Err() (what was deleted stays
// deleted).
func (s *Ops) PruneMessages(ctx context.Context, before time.Time) (int64, error) {
	if before.IsZero() {
		return 0, Errorf(EINVALID, "before is required: messages created before this time are deleted")
	}
	if now := s.clock.Now(); before.After(now) {
		return 0, Errorf(EINVALID, "before %s is in the future (now %s): give a past time", before.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	var total int64
	for {
		n, err := s.PruneMessageBatch(ctx, before, PruneBatch)
		total += n
		if err != nil || n < PruneBatch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
