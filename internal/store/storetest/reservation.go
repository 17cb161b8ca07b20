package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// reservationPatterns lists "agent:pattern" of rs, in their order.
func reservationPatterns(rs []*hub.Reservation) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.AgentName + ":" + r.Pattern
	}
	return out
}

func testReservations(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	alice, bob := createAgent(t, db, "alice"), createAgent(t, db, "bob")
	res := func(a *hub.Agent, pattern string, mode hub.ReservationMode, ttl time.Duration) *hub.Reservation {
		return &hub.Reservation{AgentID: a.ID, Pattern: pattern, Mode: mode, Reason: "why " + pattern, CreatedAt: t0, ExpiresAt: t0.Add(ttl)}
	}
	src := res(alice, "src", hub.ReservationExclusive, time.Hour)
	docs := res(alice, "docs/*.md", hub.ReservationShared, time.Minute)
	lib := res(bob, "Lib", hub.ReservationExclusive, 2*time.Hour)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertReservations([]*hub.Reservation{src, docs, lib}) })
	if src.ID == 0 || docs.ID == 0 || lib.ID == 0 || src.ID == docs.ID {
		t.Fatalf("IDs %d %d %d, want distinct non-zero", src.ID, docs.ID, lib.ID)
	}

	mustView(t, db, func(tx hub.Tx) error {
		all, err := tx.ActiveReservations(t0, 0)
		if err != nil {
			return err
		}
		// By pattern in byte order: upper case first.
		if got, want := reservationPatterns(all), []string{"bob:Lib", "alice:docs/*.md", "alice:src"}; !slices.Equal(got, want) {
			t.Errorf("ActiveReservations(all) = %v, want %v", got, want)
		}
		got := all[2]
		if got.ID != src.ID || got.Mode != hub.ReservationExclusive || got.Reason != "why src" || !got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("read back %+v, want %+v", got, src)
		}
		mine, err := tx.ActiveReservations(t0.Add(time.Minute), alice.ID)
		if err != nil {
			return err
		}
		if got, want := reservationPatterns(mine), []string{"alice:src"}; !slices.Equal(got, want) {
			t.Errorf("alice's at +1m = %v, want %v (docs expired at +1m exactly)", got, want)
		}
		holders, err := tx.ReservationHolders(t0.Add(90 * time.Minute))
		if err != nil {
			return err
		}
		if !slices.Equal(holders, []int64{bob.ID}) {
			t.Errorf("holders at +90m = %v, want bob %d", holders, bob.ID)
		}
		if _, err := tx.ReservationByID(999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("ReservationByID(999) = %v, want ENOTFOUND", err)
		}
		return nil
	})

	// An expired reservation of the same agent and pattern is replaced by
	// one with a new ID: an ID never comes back (RecheckReservations).
	again := res(alice, "docs/*.md", hub.ReservationExclusive, 3*time.Hour)
	again.CreatedAt = t0.Add(2 * time.Minute)
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertReservations([]*hub.Reservation{again}) })
	if again.ID <= lib.ID {
		t.Errorf("replacing the expired docs/*.md gave ID %d, want a new one above %d", again.ID, lib.ID)
	}
	mustView(t, db, func(tx hub.Tx) error {
		if _, err := tx.ReservationByID(docs.ID); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("the replaced reservation %d: %v, want ENOTFOUND", docs.ID, err)
		}
		max, err := tx.MaxReservationID()
		if err != nil || max != again.ID {
			t.Errorf("MaxReservationID = %d, %v; want %d", max, err, again.ID)
		}
		// Rechecked at +2m: alice's own (src, docs again), bob's Lib by
		// ID, and nothing above again's ID; alice's expired docs not.
		rs, err := tx.RecheckReservations(t0.Add(2*time.Minute), alice.ID, []int64{lib.ID, 999}, again.ID)
		if err != nil {
			return err
		}
		if got, want := reservationPatterns(rs), []string{"bob:Lib", "alice:docs/*.md", "alice:src"}; !slices.Equal(got, want) {
			t.Errorf("RecheckReservations(alice, [Lib], above %d) = %v, want %v", again.ID, got, want)
		}
		if rs, err = tx.RecheckReservations(t0, bob.ID, nil, src.ID); err != nil {
			return err
		}
		if got, want := reservationPatterns(rs), []string{"bob:Lib", "alice:docs/*.md"}; !slices.Equal(got, want) {
			t.Errorf("RecheckReservations(bob, none, above src) = %v, want %v (bob's, and those made after src)", got, want)
		}
		if rs, err = tx.RecheckReservations(t0, 999, nil, again.ID); err != nil || len(rs) != 0 {
			t.Errorf("RecheckReservations(nobody, none, above the last) = %v, %v; want none", reservationPatterns(rs), err)
		}
		return nil
	})
	src.ExpiresAt, src.Reason = t0.Add(5*time.Hour), "longer"
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.UpdateReservation(src) })
	mustView(t, db, func(tx hub.Tx) error {
		r, err := tx.ReservationByID(again.ID)
		if err != nil || r.Mode != hub.ReservationExclusive || !r.ExpiresAt.Equal(t0.Add(3*time.Hour)) {
			t.Errorf("replaced reservation = %+v, %v", r, err)
		}
		r, err = tx.ReservationByID(src.ID)
		if err != nil || r.Reason != "longer" || !r.ExpiresAt.Equal(t0.Add(5*time.Hour)) {
			t.Errorf("updated reservation = %+v, %v", r, err)
		}
		return nil
	})
	err := db.Update(t.Context(), func(tx hub.Tx) error {
		return tx.UpdateReservation(&hub.Reservation{ID: 999, Mode: hub.ReservationShared})
	})
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("UpdateReservation(999) = %v, want ENOTFOUND", err)
	}

	mustView(t, db, func(tx hub.Tx) error {
		ids, err := tx.ExpiredReservations(t0.Add(3*time.Hour), 10)
		if err != nil || len(ids) != 2 { // Lib (2h) and docs (3h, at the instant)
			t.Errorf("ExpiredReservations(3h) = %v, %v; want 2", ids, err)
		}
		if ids, err = tx.ExpiredReservations(t0.Add(3*time.Hour), 1); err != nil || len(ids) != 1 {
			t.Errorf("ExpiredReservations(3h, limit 1) = %v, %v; want 1", ids, err)
		}
		return err
	})
	var expired, deleted int
	mustUpdate(t, db, func(tx hub.Tx) (err error) {
		if expired, err = tx.DeleteExpiredReservations(t0.Add(3*time.Hour), 10); err != nil {
			return err
		}
		deleted, err = tx.DeleteReservations([]int64{src.ID, 999})
		return err
	})
	if expired != 2 || deleted != 1 { // Lib (2h) and docs (3h, at the instant); then src
		t.Errorf("expired %d, deleted %d; want 2 and 1", expired, deleted)
	}
	mustView(t, db, func(tx hub.Tx) error {
		left, err := tx.ActiveReservations(time.Time{}.Add(time.Nanosecond), 0)
		if err != nil {
			return err
		}
		if len(left) != 0 {
			t.Errorf("left after deletes: %v", reservationPatterns(left))
		}
		return nil
	})
}

// testReservationRace races agents for one glob through two handles on the
// same database, as two hub processes would: the decision is taken under
// the store's write lock, so exactly one gets the exclusive reservation.
func testReservationRace(t *testing.T, h NewDB) {
	t.Parallel()
	dbs, svcs := twoServices(t, h)
	const n = 16
	agents := make([]*hub.Agent, n)
	for i := range agents {
		agents[i] = createAgent(t, dbs[0], fmt.Sprintf("racer-%02d", i))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, errs[i] = svcs[i%2].Reservations.ReservePaths(t.Context(), agents[i], hub.ReservationRequest{Patterns: []string{"src/**/*.go"}})
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
	if won != 1 {
		t.Errorf("%d exclusive winners, want exactly 1", won)
	}
	mustView(t, dbs[1], func(tx hub.Tx) error {
		rs, err := tx.ActiveReservations(t0, 0)
		if err == nil && len(rs) != 1 {
			t.Errorf("%d reservations stored, want 1: %v", len(rs), reservationPatterns(rs))
		}
		return err
	})
}

// twoServices opens two handles on one fresh database, as two hub
// processes would, and a service on each.
func twoServices(t *testing.T, h NewDB) ([]hub.Store, []*hub.Services) {
	t.Helper()
	open := h(t)
	dbs := []hub.Store{open(), open()}
	svcs := make([]*hub.Services, len(dbs))
	for i, db := range dbs {
		svcs[i] = hub.NewServices(hub.NewCore(db, hub.NewFakeClock(t0), hub.DefaultConfig(), hub.NewWaiters(hub.DefaultConfig().WaitLimits, hub.NewFakeClock(t0))))
	}
	return dbs, svcs
}
