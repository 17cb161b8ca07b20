package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// A write marked hub.RowLocked that tries what the shared write lock does
// not cover (a read cursor moved, an event, another agent's row written
// without its lock) is refused, and writes nothing.
func TestRowLockedRefusesOtherWrites(t *testing.T) {
	db := openTest(t, pgtest.Schema(t))
	ctx := context.Background()
	a := &hub.Agent{Name: "a", CreatedAt: t0}
	if err := db.Update(ctx, func(tx hub.Tx) error { return tx.CreateAgent(a, hub.HashToken("a")) }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func(tx hub.Tx) error
	}{
		{"cursor moved", func(tx hub.Tx) error {
			cur, err := tx.AgentByID(a.ID)
			if err != nil {
				return err
			}
			cur.ReadUpTo, cur.Role = 5, "changed"
			return tx.UpdateAgent(cur)
		}},
		{"row read by name, unlocked", func(tx hub.Tx) error {
			cur, err := tx.AgentByName(a.Name)
			if err != nil {
				return err
			}
			cur.Role = "changed"
			return tx.UpdateAgent(cur)
		}},
		{"event", func(tx hub.Tx) error {
			return tx.InsertEvent(&hub.Event{AgentID: a.ID, Kind: hub.EventKind("x"), CreatedAt: t0})
		}},
	} {
		err := db.Update(hub.RowLocked(ctx), tc.fn)
		if !errors.Is(err, errNeedsExclusive) {
			t.Errorf("%s: error = %v, want %v", tc.name, err, errNeedsExclusive)
		}
		// Unmarked, the same write runs.
		if err := db.Update(ctx, tc.fn); err != nil {
			t.Errorf("%s, unmarked: %v", tc.name, err)
		}
	}
}

// Two heartbeat-like writes on two replicas that lock two agents' rows in
// opposite orders deadlock; PostgreSQL aborts one, which runs again under
// the exclusive lock: both commit, neither update is lost.
func TestRowLockedDeadlockRunsAgain(t *testing.T) {
	u := pgtest.Schema(t)
	dbs := []*DB{openTest(t, u), openTest(t, u)}
	ctx := context.Background()
	var agents [2]*hub.Agent
	for i, name := range []string{"x", "y"} {
		agents[i] = &hub.Agent{Name: name, CreatedAt: t0}
		if err := dbs[0].Update(ctx, func(tx hub.Tx) error { return tx.CreateAgent(agents[i], hub.HashToken(name)) }); err != nil {
			t.Fatal(err)
		}
	}
	var first sync.WaitGroup // both hold their first row before taking the second
	first.Add(2)
	runs := make([]int, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			errs[i] = dbs[i].Update(hub.RowLocked(ctx), func(tx hub.Tx) error {
				runs[i]++
				for j, k := range []int{i, 1 - i} {
					cur, err := tx.AgentByID(agents[k].ID)
					if err != nil {
						return err
					}
					if j == 0 && runs[i] == 1 {
						first.Done()
						first.Wait()
					}
					cur.LastInteractionBeat++
					if err := tx.UpdateAgent(cur); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if runs[0]+runs[1] != 3 {
		t.Errorf("the writes ran %v times, want one of them twice (a deadlock, then again)", runs)
	}
	for _, a := range agents {
		err := dbs[0].View(ctx, func(tx hub.Tx) error {
			got, err := tx.AgentByID(a.ID)
			if err == nil && got.LastInteractionBeat != 2 {
				t.Errorf("agent %s: beat %d after two increments, want 2", a.Name, got.LastInteractionBeat)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// t0 is the time these tests write.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
