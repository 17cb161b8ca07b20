package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// TestAddresseesMatchTheTable checks the writer's addressee cache against
// the agents table in the same transaction, under concurrent writes that
// the writer groups into one commit (savepoints rolled back among
// committed ones), changes the hub's methods never make (a project moved,
// an agent deleted and its name taken again, in raw SQL) and commits
// through a second handle on the same file.
func TestAddresseesMatchTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.db")
	ctx := context.Background()
	open := func() *DB {
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db, other := open(), open()
	const agents = 8
	name := func(i int) string { return fmt.Sprintf("agent-%d", i) }
	for i := range agents {
		if err := db.Update(ctx, func(tx hub.Tx) error {
			return tx.CreateAgent(&hub.Agent{Name: name(i), CreatedAt: time.Unix(1, 0)}, nil)
		}); err != nil {
			t.Fatal(err)
		}
	}
	// check compares AddresseeByName with the table for every agent.
	check := func(tx hub.Tx) error {
		for i := range agents {
			got, err := tx.AddresseeByName(name(i))
			var want hub.Addressee
			var disabledAt int64
			werr := tx.(*Tx).queryRow(`SELECT id, name, project, disabled_at FROM agents WHERE name = ?`, name(i)).Scan(&want.ID, &want.Name, &want.Project, &disabledAt)
			want.Disabled = disabledAt != 0
			if (err != nil) != (werr != nil) || got != want {
				return fmt.Errorf("AddresseeByName(%s) = %+v, %v; the table holds %+v, %v", name(i), got, err, want, werr)
			}
		}
		return nil
	}
	errUndo := errors.New("undo")
	// change makes one random change to agent i through tx.
	change := func(tx hub.Tx, rng *rand.Rand, i int) error {
		t := tx.(*Tx)
		var err error
		switch rng.IntN(4) {
		case 0:
			_, err = t.exec(`UPDATE agents SET disabled_at = ? WHERE name = ?`, rng.IntN(2), name(i))
		case 1:
			_, err = t.exec(`UPDATE agents SET project = ? WHERE name = ?`, fmt.Sprintf("p%d", rng.IntN(3)), name(i))
		case 2:
			if _, err = t.exec(`DELETE FROM agents WHERE name = ?`, name(i)); err == nil {
				_, err = t.exec(`INSERT INTO agents (name, created_at) VALUES (?, 1)`, name(i))
			}
		case 3:
			_, err = t.exec(`UPDATE agents SET last_seen_at = last_seen_at + 1 WHERE name = ?`, name(i))
		}
		return err
	}
	for round := range 30 {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := range 16 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				target := db
				if w == 0 && round%3 == 0 {
					target = other
				}
				err := target.Update(ctx, func(tx hub.Tx) error {
					if err := check(tx); err != nil {
						return err
					}
					if err := change(tx, rng, rng.IntN(agents)); err != nil {
						return err
					}
					if err := check(tx); err != nil {
						return err
					}
					if rng.IntN(3) == 0 {
						return errUndo // rolled back: its savepoint, or the whole transaction
					}
					return nil
				})
				if err != nil && !errors.Is(err, errUndo) {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
