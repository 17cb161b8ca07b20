package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// fullCount reads agentID's inbox through Inbox (a scan of its deliveries,
// not the counters) and counts what InboxCounts must report at its read
// cursor.
func fullCount(tb testing.TB, db hub.Store, agentID int64) (readUpTo, unread, mentions, latest int64) {
	tb.Helper()
	mustView(tb, db, func(tx hub.Tx) error {
		a, err := tx.AgentByID(agentID)
		if err != nil {
			return err
		}
		readUpTo = a.ReadUpTo
		ms, err := tx.Inbox(agentID, hub.InboxQuery{Limit: 1 << 30})
		for _, m := range ms {
			latest = max(latest, m.ID)
			if m.ID > readUpTo {
				unread++
				if m.MentionsYou {
					mentions++
				}
			}
		}
		return err
	})
	return readUpTo, unread, mentions, latest
}

// checkCounts compares InboxCounts at each agent's read cursor with a full
// count.
func checkCounts(tb testing.TB, db hub.Store, agents []*hub.Agent, step string) {
	tb.Helper()
	for _, a := range agents {
		readUpTo, unread, mentions, latest := fullCount(tb, db, a.ID)
		mustView(tb, db, func(tx hub.Tx) error {
			u, m, l, err := tx.InboxCounts(a.ID, readUpTo)
			if u != unread || m != mentions || l != latest {
				tb.Errorf("%s: %s: InboxCounts at its cursor %d = %d unread, %d mentions, latest %d; a full count gives %d, %d, %d",
					step, a.Name, readUpTo, u, m, l, unread, mentions, latest)
			}
			return err
		})
	}
}

// The unread counts a store may keep as counters (both stores do) equal a
// full count after a random mix of every write that moves them: posts one
// by one and in bulk, mentions, read cursors moved both ways, writes rolled
// back while others commit beside them, old messages deleted — written
// concurrently through two handles, as two replicas would.
func testInboxCountsMatchFullCount(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	dbs := []hub.Store{open(), open()}
	db := dbs[0]
	var agents []*hub.Agent
	for i := range 6 {
		agents = append(agents, createAgent(t, db, fmt.Sprintf("agent-%d", i)))
	}
	errRollback := errors.New("roll back")
	var clock time.Duration // message times, so that retention deletes the oldest
	var mu sync.Mutex
	stamp := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock += time.Second
		return t0.Add(clock)
	}
	// op runs one random write through db, seeded by seed.
	op := func(db hub.Store, seed uint64) error {
		rng := rand.New(rand.NewPCG(seed, 7))
		deliveries := func() []hub.Delivery {
			var ds []hub.Delivery
			for _, a := range agents {
				if rng.IntN(3) > 0 {
					ds = append(ds, hub.Delivery{AgentID: a.ID, Mention: rng.IntN(4) == 0})
				}
			}
			return ds
		}
		post := func(tx hub.Tx) error {
			m := &hub.Message{From: "x", Body: "b", Kind: hub.KindMessage, CreatedAt: stamp()}
			return tx.InsertMessage(m, deliveries())
		}
		moveCursor := func(tx hub.Tx) error {
			a, err := tx.AgentByID(agents[rng.IntN(len(agents))].ID)
			if err != nil {
				return err
			}
			top, err := tx.MaxMessageID()
			if err != nil {
				return err
			}
			a.ReadUpTo = rng.Int64N(top + 2)
			return tx.UpdateAgent(a)
		}
		ctx := context.Background()
		switch n := rng.IntN(10); {
		case n < 4: // a post, beside other replicas' posts as the hub posts
			return db.Update(hub.RowLocked(ctx), post)
		case n == 4: // a bulk insert, as the nudge sweep does
			return db.Update(hub.RowLocked(ctx), func(tx hub.Tx) error {
				var ms []*hub.Message
				var dss [][]hub.Delivery
				for range 1 + rng.IntN(5) {
					ms = append(ms, &hub.Message{From: hub.SenderOrchestrator, Body: "n", Kind: hub.KindNudge, CreatedAt: stamp()})
					dss = append(dss, deliveries())
				}
				return tx.InsertMessages(ms, dss)
			})
		case n < 7:
			return db.Update(ctx, moveCursor)
		case n == 7: // a post and a cursor move, rolled back
			err := db.Update(ctx, func(tx hub.Tx) error {
				if err := post(tx); err != nil {
					return err
				}
				if err := moveCursor(tx); err != nil {
					return err
				}
				return errRollback
			})
			if errors.Is(err, errRollback) {
				return nil
			}
			return err
		default: // the oldest messages deleted (their deliveries cascade)
			return db.Update(ctx, func(tx hub.Tx) error {
				mu.Lock()
				cut := t0.Add(clock / 2)
				mu.Unlock()
				_, err := tx.DeleteMessagesBefore(cut, 1+rng.IntN(5))
				return err
			})
		}
	}
	seed := uint64(1)
	for round := range 15 {
		var wg sync.WaitGroup
		errs := make(chan error, 24)
		for i := range 24 {
			s := seed
			seed++
			wg.Go(func() { errs <- op(dbs[i%2], s) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkCounts(t, db, agents, fmt.Sprintf("round %d", round))
		if t.Failed() {
			return
		}
	}
	var any int64
	for _, a := range agents {
		_, _, _, latest := fullCount(t, db, a.ID)
		any += latest
	}
	if any == 0 {
		t.Fatal("the mix left no deliveries: it tested nothing")
	}
}
