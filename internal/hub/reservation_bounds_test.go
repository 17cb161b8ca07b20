package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestStarAttackIsRefused(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "mallory")
	held, attack := starPatterns()
	_, _, err := h.ReservePaths(ctx, as[0], hub.ReservationRequest{Patterns: held, Mode: hub.ReservationShared})
	wantCode(t, "510 stars in a segment", err, hub.EINVALID)
	if err == nil || !strings.Contains(err.Error(), "510 stars") || !strings.Contains(err.Error(), "limit is 4") {
		t.Errorf("refusal %q does not name the stars and the limit", err)
	}
	_, _, err = h.ReservePaths(ctx, as[1], hub.ReservationRequest{Patterns: []string{attack}})
	wantCode(t, "the attack pattern", err, hub.EINVALID)
	_, err = h.ListReservations(ctx, hub.ReservationFilter{Paths: []string{attack}})
	wantCode(t, "the attack pattern as a list filter", err, hub.EINVALID)
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("d%d", i)
	}
	_, err = h.ListReservations(ctx, hub.ReservationFilter{Paths: many})
	wantCode(t, "101 list filters", err, hub.EINVALID)
	if err == nil || !strings.Contains(err.Error(), "101 paths") || !strings.Contains(err.Error(), "limit is 100") {
		t.Errorf("refusal %q does not name the count and the limit", err)
	}
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 0 {
		t.Errorf("refused requests stored %d reservations", len(got))
	}
}

// phaseStore is a store that cancels the caller's context once a read
// transaction is over, and counts the write transactions it is asked for:
// a call whose matching runs between its read and its write stops there.
type phaseStore struct {
	hub.Store
	cancel  context.CancelFunc
	armed   atomic.Bool // set once the service is initialised
	updates atomic.Int64
}

func (s *phaseStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	err := s.Store.View(ctx, fn)
	if s.armed.Load() {
		s.cancel()
	}
	return err
}

func (s *phaseStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, fn)
}

// The overlaps of a request are decided before the write transaction,
// under the caller's context: a caller that gives up while they are
// computed gets its context's error, and the writer is never asked.
func TestReservePathsMatchesBeforeTheWriter(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	as := h.agents(t, "alice", "mallory")
	h.reserve(t, as[0], hub.ReservationShared, "src/**/*.go", "docs")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &phaseStore{Store: h.DB, cancel: cancel}
	svc := h.over(t, st)
	st.armed.Store(true)
	st.updates.Store(0)
	_, _, err := svc.ReservePaths(ctx, as[1], hub.ReservationRequest{Patterns: []string{"src/hub/*.go"}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ReservePaths with the caller gone during matching = %v, want context.Canceled", err)
	}
	if n := st.updates.Load(); n != 0 {
		t.Errorf("%d write transactions for a call given up before its write, want 0", n)
	}
	if got := h.reservations(t, hub.ReservationFilter{Agent: "mallory"}); len(got) != 0 {
		t.Errorf("mallory holds %v, want nothing", got)
	}
}

// A list filtered by paths stops when its caller gives up.
func TestListReservationsStopsWhenTheCallerGivesUp(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	alice := h.agents(t, "alice")[0]
	h.reserve(t, alice, hub.ReservationShared, "src/**/*.go", "docs")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &phaseStore{Store: h.DB, cancel: cancel}
	svc := h.over(t, st)
	st.armed.Store(true)
	rs, err := svc.ListReservations(ctx, hub.ReservationFilter{Paths: []string{"src/a.go"}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ListReservations with the caller gone = %d reservations, %v; want context.Canceled", len(rs), err)
	}
}

// raceStore runs before on the store just before the first write
// transaction it is asked for (as another hub process would, between the
// reservation's read and its write), and counts reads and writes.
type raceStore struct {
	hub.Store
	before        func(hub.Tx) error
	once          sync.Once
	views, writes atomic.Int64
}

func (s *raceStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

func (s *raceStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	var err error
	s.once.Do(func() { err = s.Store.Update(ctx, s.before) })
	if err != nil {
		return err
	}
	s.writes.Add(1)
	return s.Store.Update(ctx, fn)
}

// What was reserved between a reservation's read and its write is matched
// inside the write: one reservation there is matched on the spot; many send
// the call back to read and match outside again.
func TestReservePathsSeesWhatChangedSinceItsRead(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 40} {
		t.Run(fmt.Sprintf("%d reserved meanwhile", n), func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			as := h.agents(t, "alice", "bob")
			alice, bob := as[0], as[1]
			st := &raceStore{Store: h.DB, before: func(tx hub.Tx) error {
				rs := []*hub.Reservation{{AgentID: bob.ID, Pattern: "src/hub", Mode: hub.ReservationExclusive, CreatedAt: coreT0, ExpiresAt: coreT0.Add(time.Hour)}}
				for i := 1; i < n; i++ {
					rs = append(rs, &hub.Reservation{AgentID: bob.ID, Pattern: fmt.Sprintf("docs/%d", i), Mode: hub.ReservationShared, CreatedAt: coreT0, ExpiresAt: coreT0.Add(time.Hour)})
				}
				return tx.InsertReservations(rs)
			}}
			svc := h.over(t, st)
			st.views.Store(0)
			_, cs, err := svc.ReservePaths(context.Background(), alice, hub.ReservationRequest{Patterns: []string{"src/**/*.go"}})
			wantCode(t, "exclusive over bob's, reserved after alice's read", err, hub.EPRECONDITION)
			if err == nil || !strings.Contains(err.Error(), "bob") || len(cs) != 1 {
				t.Errorf("refusal %v, conflicts %+v; want bob's src/hub named", err, cs)
			}
			wantReads := int64(1)
			if n > 32 { // more pairs than a write transaction matches (one pattern requested)
				wantReads = 2
			}
			if got := st.views.Load(); got != wantReads {
				t.Errorf("%d reads, want %d", got, wantReads)
			}
			if got := h.reservations(t, hub.ReservationFilter{Agent: "alice"}); len(got) != 0 {
				t.Errorf("alice holds %v after a refusal", got)
			}
		})
	}
}

// An exclusive reservation covering the whole project is the admin's: an
// agent may hold it shared, or name directories; the admin reserves it for
// an agent, and then it refuses others as any exclusive reservation does.
func TestWholeProjectExclusiveNeedsTheAdmin(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	for _, p := range []string{"**", ".", "./", "*", "**/*", "*/**", "**/*/**", "?*", "*?"} {
		_, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"docs", p}})
		wantCode(t, "exclusive "+p, err, hub.EPERMISSION)
		if err != nil && !strings.Contains(err.Error(), "hubctl reservations reserve --agent") {
			t.Errorf("refusal of %s = %q, want it to name how the admin reserves", p, err)
		}
	}
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 0 {
		t.Fatalf("refused requests stored %v", got)
	}
	// Not the whole project: a top-level name is left out.
	for _, p := range []string{"?", "??*", "*/x", "**/*.go", "*.md", "src/**", "**/*/x"} {
		if _, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{p}}); err != nil {
			t.Errorf("exclusive %s: %v, want granted", p, err)
		}
		if _, err := h.ReleasePaths(ctx, alice, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	h.reserve(t, alice, hub.ReservationShared, "**")
	if _, err := h.ReleasePaths(ctx, alice, nil, nil); err != nil {
		t.Fatal(err)
	}

	rs, _, err := h.ReservePathsFor(ctx, "bob", hub.ReservationRequest{Patterns: []string{"."}, Reason: "release freeze"})
	if err != nil || len(rs) != 1 || rs[0].Pattern != "**" || rs[0].AgentName != "bob" || !rs[0].Exclusive() {
		t.Fatalf("admin reserves ** for bob = %+v, %v", rs, err)
	}
	_, _, err = h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"src/a.go"}})
	wantCode(t, "exclusive under bob's **", err, hub.EPRECONDITION)
	// bob renews it as his own; alice's shared one is granted, naming it.
	if _, err := h.RenewReservations(ctx, bob, nil, time.Hour); err != nil {
		t.Error(err)
	}
	if _, cs := h.reserve(t, alice, hub.ReservationShared, "src/a.go"); len(cs) != 1 || cs[0].Held.Pattern != "**" {
		t.Errorf("conflicts %+v, want bob's **", cs)
	}

	_, _, err = h.ReservePathsFor(ctx, "nobody", hub.ReservationRequest{Patterns: []string{"**"}})
	wantCode(t, "unknown agent", err, hub.ENOTFOUND)
	_, _, err = h.ReservePathsFor(ctx, "bob", hub.ReservationRequest{Patterns: []string{"../x"}})
	wantCode(t, "bad pattern", err, hub.EINVALID)
	if _, err := h.SetAgentDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	_, _, err = h.ReservePathsFor(ctx, "alice", hub.ReservationRequest{Patterns: []string{"x"}})
	wantCode(t, "disabled agent", err, hub.EPRECONDITION)
}
