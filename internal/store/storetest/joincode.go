package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func testJoinCodes(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	a := &hub.JoinCode{Role: "reviewer", Project: "red", Note: "for CI", MaxUses: 2, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	b := &hub.JoinCode{MaxUses: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.InsertJoinCode(a, hub.HashToken("code-a")); err != nil {
			return err
		}
		return tx.InsertJoinCode(b, hub.HashToken("code-b"))
	})
	if a.ID == 0 || b.ID == 0 || a.ID == b.ID {
		t.Fatalf("IDs %d %d, want distinct non-zero", a.ID, b.ID)
	}
	err := db.Update(t.Context(), func(tx hub.Tx) error {
		return tx.InsertJoinCode(&hub.JoinCode{MaxUses: 1, CreatedAt: t0, ExpiresAt: t0}, hub.HashToken("code-a"))
	})
	if hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("second code with the same hash: %v, want ECONFLICT", err)
	}

	var uses []bool
	mustUpdate(t, db, func(tx hub.Tx) error {
		for _, at := range []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)} {
			ok, err := tx.UseJoinCode(a.ID, at)
			if err != nil {
				return err
			}
			uses = append(uses, ok)
		}
		ok, err := tx.UseJoinCode(b.ID, t0.Add(time.Minute)) // at its expiry: expired
		uses = append(uses, ok)
		return err
	})
	if want := fmt.Sprint([]bool{true, true, false, false}); fmt.Sprint(uses) != want {
		t.Errorf("uses granted %v, want %s (two of a, none past b's expiry)", uses, want)
	}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RevokeJoinCode(b.ID, t0.Add(time.Second)) })
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.RevokeJoinCode(b.ID, t0.Add(time.Hour)) }) // keeps the first time
	mustUpdate(t, db, func(tx hub.Tx) error {
		ok, err := tx.UseJoinCode(b.ID, t0)
		if ok {
			t.Error("a revoked code was used")
		}
		return err
	})
	mustView(t, db, func(tx hub.Tx) error {
		got, err := tx.JoinCodeByHash(hub.HashToken("code-a"))
		if err != nil {
			return err
		}
		if got.ID != a.ID || got.Role != "reviewer" || got.Project != "red" || got.Note != "for CI" || got.Uses != 2 || got.MaxUses != 2 ||
			!got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(t0.Add(time.Hour)) || !got.RevokedAt.IsZero() {
			t.Errorf("code a read back %+v", got)
		}
		gotB, err := tx.JoinCodeByID(b.ID)
		if err != nil {
			return err
		}
		if !gotB.RevokedAt.Equal(t0.Add(time.Second)) || gotB.Uses != 0 {
			t.Errorf("code b read back %+v, want revoked at t0+1s and unused", gotB)
		}
		list, err := tx.JoinCodes()
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
			t.Errorf("JoinCodes = %+v, want b then a (newest first)", list)
		}
		if _, err := tx.JoinCodeByHash(hub.HashToken("nope")); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("JoinCodeByHash(unknown) = %v, want ENOTFOUND", err)
		}
		if _, err := tx.JoinCodeByID(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("JoinCodeByID(999) = %v, want ENOTFOUND", err)
		}
		return nil
	})
	err = db.Update(t.Context(), func(tx hub.Tx) error { return tx.RevokeJoinCode(999, t0) })
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("RevokeJoinCode(999) = %v, want ENOTFOUND", err)
	}
}

// testJoinCodeRace races registrations for a code's last uses through two
// handles on the same database, as two hub processes would: exactly as
// many agents register as the code has uses, the others are told it is
// used up.
func testJoinCodeRace(t *testing.T, h NewDB) {
	t.Parallel()
	dbs, svcs := twoServices(t, h)
	const uses, n = 2, 12
	c, code, err := svcs[0].Agents.CreateJoinCode(t.Context(), hub.CreateJoinCodeRequest{MaxUses: uses, Role: "racer"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, errs[i] = svcs[i%2].Agents.Join(t.Context(), hub.JoinRequest{Code: code, Name: fmt.Sprintf("racer-%02d", i)})
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch hub.ErrorCode(err) {
		case "":
			won++
		case hub.EPRECONDITION:
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if won != uses {
		t.Errorf("%d registrations, want exactly %d (the code's uses)", won, uses)
	}
	mustView(t, dbs[1], func(tx hub.Tx) error {
		got, err := tx.JoinCodeByID(c.ID)
		if err == nil && got.Uses != uses {
			t.Errorf("uses counted %d, want %d", got.Uses, uses)
		}
		return err
	})
	if names := agentNames(t, dbs[0]); len(names) != uses {
		t.Errorf("agents stored %v, want %d", names, uses)
	}
}
