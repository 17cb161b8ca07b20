package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// Writes marked hub.RowLocked (heartbeats) lose no update, neither to each
// other nor to unmarked writes of the same agent's row (read cursor
// moves), when both run concurrently through two handles, as on two
// replicas: each write increments one field of the same agent's row, read
// and written back whole (AgentByID, UpdateAgent), so a write that read a
// stale row would undo another's increment.
func testRowLockedWritesLoseNoUpdate(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	dbs := []hub.Store{open(), open()}
	a := createAgent(t, dbs[0], "busy")
	const beats, reads = 40, 20
	increment := func(ctx context.Context, db hub.Store, field func(*hub.Agent)) error {
		return db.Update(ctx, func(tx hub.Tx) error {
			cur, err := tx.AgentByID(a.ID)
			if err != nil {
				return err
			}
			field(cur)
			return tx.UpdateAgent(cur)
		})
	}
	var wg sync.WaitGroup
	errs := make(chan error, beats+reads)
	for i := range beats {
		wg.Go(func() {
			errs <- increment(hub.RowLocked(context.Background()), dbs[i%2], func(cur *hub.Agent) {
				cur.LastInteractionBeat++
				cur.CurrentHeartbeatID = fmt.Sprint(i)
			})
		})
	}
	for i := range reads {
		wg.Go(func() {
			errs <- increment(context.Background(), dbs[i%2], func(cur *hub.Agent) { cur.ReadUpTo++ })
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustView(t, dbs[0], func(tx hub.Tx) error {
		got, err := tx.AgentByID(a.ID)
		if err != nil {
			return err
		}
		if got.LastInteractionBeat != beats || got.ReadUpTo != reads {
			t.Errorf("after %d concurrent heartbeat increments and %d cursor increments: beat %d, cursor %d (lost updates)",
				beats, reads, got.LastInteractionBeat, got.ReadUpTo)
		}
		return nil
	})
}
