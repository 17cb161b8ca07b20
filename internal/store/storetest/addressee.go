package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// testAddressees: AddresseeByName, what routing a post reads of an agent,
// is what the agents table holds in the transaction's own view — after a
// change earlier in the same transaction, after a rolled-back write, after
// a commit through another handle — however often it was read before (a
// store may keep it in memory).
func testAddressees(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	db, other := open(), open()
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.CreateProject(&hub.Project{Name: "red", CreatedAt: t0}) })
	alice := createAgent(t, db, "alice")
	bob := &hub.Agent{Name: "bob", Project: "red", CreatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.CreateAgent(bob, hub.HashToken("token-bob")) })

	// expect checks AddresseeByName(name) in a write and in a read
	// transaction of db; disabled is the state it must report.
	expect := func(step string, a *hub.Agent, disabled bool) {
		t.Helper()
		want := hub.Addressee{ID: a.ID, Name: a.Name, Project: hub.ProjectOr(a.Project), Disabled: disabled}
		for _, read := range []struct {
			kind string
			run  func(context.Context, func(hub.Tx) error) error
		}{{"Update", db.Update}, {"View", db.View}} {
			err := read.run(t.Context(), func(tx hub.Tx) error {
				got, err := tx.AddresseeByName(a.Name)
				if err != nil {
					return err
				}
				if got != want {
					t.Errorf("%s: AddresseeByName(%s) in %s = %+v, want %+v", step, a.Name, read.kind, got, want)
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: AddresseeByName(%s) in %s: %v", step, a.Name, read.kind, err)
			}
		}
	}
	setDisabled := func(tx hub.Tx, a *hub.Agent, disabled bool) error {
		cur, err := tx.AgentByID(a.ID)
		if err != nil {
			return err
		}
		cur.DisabledAt = time.Time{}
		if disabled {
			cur.DisabledAt = t0
		}
		return tx.UpdateAgent(cur)
	}

	expect("created", alice, false)
	expect("created, other project", bob, false)
	expect("read again", alice, false)

	// A change is seen by the next read of the same transaction.
	mustUpdate(t, db, func(tx hub.Tx) error {
		if _, err := tx.AddresseeByName("alice"); err != nil {
			return err
		}
		if err := setDisabled(tx, alice, true); err != nil {
			return err
		}
		got, err := tx.AddresseeByName("alice")
		if err == nil && !got.Disabled {
			t.Error("AddresseeByName after disabling in the same transaction: not disabled")
		}
		return err
	})
	expect("disabled", alice, true)

	// A write that fails is rolled back, and so is what it read.
	errUndo := errors.New("undo")
	err := db.Update(t.Context(), func(tx hub.Tx) error {
		if err := setDisabled(tx, alice, false); err != nil {
			return err
		}
		if got, err := tx.AddresseeByName("alice"); err != nil || got.Disabled {
			t.Errorf("AddresseeByName after enabling in the same transaction = %+v, %v; want enabled", got, err)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatalf("Update = %v, want the write's own error", err)
	}
	expect("enabling rolled back", alice, true)

	// A commit through another handle (another process, another replica).
	mustUpdate(t, other, func(tx hub.Tx) error { return setDisabled(tx, alice, false) })
	expect("enabled through another handle", alice, false)
	mustUpdate(t, other, func(tx hub.Tx) error { return setDisabled(tx, bob, true) })
	expect("disabled through another handle", bob, true)

	mustUpdate(t, db, func(tx hub.Tx) error {
		if _, err := tx.AddresseeByName("nobody"); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("AddresseeByName(nobody) = %v, want ENOTFOUND", err)
		}
		return nil
	})

	// Whether a name is an active person's, read twice in each write (the
	// second read may come from a cache) and in a read, as people come,
	// are revoked and are rolled back, through either handle.
	person := func(step, name string, want bool) {
		t.Helper()
		for _, read := range []struct {
			kind string
			run  func(context.Context, func(hub.Tx) error) error
		}{{"Update", db.Update}, {"View", db.View}} {
			err := read.run(t.Context(), func(tx hub.Tx) error {
				for range 2 {
					got, err := tx.ActivePerson(name)
					if err != nil {
						return err
					}
					if got != want {
						t.Errorf("%s: ActivePerson(%s) in %s = %v, want %v", step, name, read.kind, got, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: ActivePerson(%s) in %s: %v", step, name, read.kind, err)
			}
		}
	}
	person("no people", "pat", false)
	person("an agent's name", "alice", false)
	err = db.Update(t.Context(), func(tx hub.Tx) error {
		if err := tx.InsertPerson(&hub.Person{Name: "pat", CreatedAt: t0}, hub.HashToken("tok-pat")); err != nil {
			return err
		}
		if ok, err := tx.ActivePerson("pat"); err != nil || !ok {
			t.Errorf("ActivePerson(pat) after making pat in the same transaction = %v, %v; want true", ok, err)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatalf("Update = %v, want the write's own error", err)
	}
	person("making pat rolled back", "pat", false)
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertPerson(&hub.Person{Name: "pat", CreatedAt: t0}, hub.HashToken("tok-pat"))
	})
	person("made", "pat", true)
	mustUpdate(t, other, func(tx hub.Tx) error { return tx.RevokePerson("pat", t0) })
	person("revoked through another handle", "pat", false)
	mustUpdate(t, other, func(tx hub.Tx) error {
		return tx.InsertPerson(&hub.Person{Name: "kim", CreatedAt: t0}, hub.HashToken("tok-kim"))
	})
	person("made through another handle", "kim", true)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RevokePerson("kim", t0) })
	person("revoked", "kim", false)
}
