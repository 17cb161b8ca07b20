package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// reserve reserves patterns for a and fails the test on error.
func (h *testHub) reserve(tb testing.TB, a *hub.Agent, mode hub.ReservationMode, patterns ...string) ([]*hub.Reservation, []hub.Conflict) {
	tb.Helper()
	rs, cs, err := h.ReservePaths(context.Background(), a, hub.ReservationRequest{Patterns: patterns, Mode: mode, Reason: "test"})
	if err != nil {
		tb.Fatalf("ReservePaths(%s, %v): %v", a.Name, patterns, err)
	}
	return rs, cs
}

// reservations lists the active reservations matching f.
func (h *testHub) reservations(tb testing.TB, f hub.ReservationFilter) []string {
	tb.Helper()
	rs, err := h.ListReservations(context.Background(), f)
	if err != nil {
		tb.Fatalf("ListReservations(%+v): %v", f, err)
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.AgentName + ":" + r.Pattern
	}
	return out
}

func reservationEvents(tb testing.TB, h *testHub, agent string) []*hub.Event {
	tb.Helper()
	evs, err := h.ListEvents(context.Background(), hub.ListEventsRequest{Agent: agent, Kind: string(hub.EventReservationReleased)})
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

func TestReservePathsConflicts(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	h.reserve(t, alice, hub.ReservationExclusive, "internal/hub/")

	_, cs, err := h.ReservePaths(ctx, bob, hub.ReservationRequest{Patterns: []string{"cmd", "internal/**/*.go"}, Mode: hub.ReservationExclusive})
	wantCode(t, "exclusive over exclusive", err, hub.EPRECONDITION)
	if err == nil || !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "internal/hub") {
		t.Errorf("refusal %q does not name alice and her pattern", err)
	}
	if len(cs) != 1 || cs[0].Held.AgentName != "alice" {
		t.Errorf("conflicts = %+v, want alice's", cs)
	}
	if got := h.reservations(t, hub.ReservationFilter{Agent: "bob"}); len(got) != 0 {
		t.Errorf("a refused request wrote %v, want nothing (cmd too)", got)
	}

	rs, cs := h.reserve(t, bob, hub.ReservationShared, "internal/hub/store.go")
	if len(rs) != 1 || len(cs) != 1 || cs[0].Held.AgentName != "alice" || !cs[0].Held.ExpiresAt.Equal(coreT0.Add(30*time.Minute)) {
		t.Errorf("shared over exclusive: %v reservations, conflicts %+v; want granted naming alice until %v", len(rs), cs, coreT0.Add(30*time.Minute))
	}
	if got, want := strings.Join(h.reservations(t, hub.ReservationFilter{Paths: []string{"internal/hub/store.go"}}), " "), "alice:internal/hub bob:internal/hub/store.go"; got != want {
		t.Errorf("list by path = %q, want %q", got, want)
	}
	if got := h.reservations(t, hub.ReservationFilter{Paths: []string{"cmd/hub/main.go"}}); len(got) != 0 {
		t.Errorf("list by an unreserved path = %v, want none", got)
	}
	_, err = h.ListReservations(ctx, hub.ReservationFilter{Paths: []string{"../x"}})
	wantCode(t, "list with ..", err, hub.EINVALID)
	_, _, err = h.ReservePaths(ctx, bob, hub.ReservationRequest{Patterns: []string{"/abs"}})
	wantCode(t, "absolute path", err, hub.EINVALID)
	_, err = h.ListReservations(ctx, hub.ReservationFilter{Agent: "nobody"})
	wantCode(t, "unknown agent", err, hub.ENOTFOUND)
}

func TestReservationExpiryByTick(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice := h.agents(t, "alice")[0]
	h.reserve(t, alice, hub.ReservationExclusive, "src")
	if _, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"lib"}, TTL: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	now := h.Clock.Advance(30 * time.Minute)
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 1 || got[0] != "alice:lib" {
		t.Errorf("at expiry the list is %v, want only alice:lib (src expired, even before a tick)", got)
	}
	h.auth(t, aliceToken(t, h)) // alice is present: only expiry applies
	expired, released, err := h.ExpireReservations(ctx, now, time.Hour, 100)
	if err != nil || expired != 1 || released != 0 {
		t.Fatalf("ExpireReservations = %d expired, %d released, %v; want 1, 0", expired, released, err)
	}
	// Another agent may now take src exclusively.
	bob := h.agents(t, "bob")[0]
	h.reserve(t, bob, hub.ReservationExclusive, "src/a.go")
}

// aliceToken rotates alice's token and returns the new one, so a test can
// authenticate (make a call) as her again.
func aliceToken(tb testing.TB, h *testHub) string {
	tb.Helper()
	_, tok, err := h.RotateToken(context.Background(), "alice", false)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func TestReservationReleasedOnDisableAndSilence(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	var tokens []string
	var agents []*hub.Agent
	for _, n := range []string{"alice", "bob", "carol"} {
		a, tok := h.agent(t, n)
		agents, tokens = append(agents, a), append(tokens, tok)
		h.reserve(t, a, hub.ReservationShared, n+"/", n+"/docs")
	}
	if _, err := h.SetAgentDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	now := h.Clock.Advance(20 * time.Minute)
	_, released, err := h.ExpireReservations(ctx, now, time.Hour, 100)
	if err != nil || released != 2 {
		t.Fatalf("after disabling alice: released %d, %v; want her 2", released, err)
	}
	if evs := reservationEvents(t, h, "alice"); len(evs) != 1 || !strings.Contains(evs[0].Detail, "disabled") {
		t.Errorf("alice's events = %+v, want one reservation_released saying disabled", evs)
	}
	// bob keeps calling, carol goes silent past the hour.
	if _, _, err := h.ReservePaths(ctx, agents[1], hub.ReservationRequest{Patterns: []string{"bob/"}, TTL: 8 * time.Hour}); err != nil {
		t.Fatal(err) // renews bob's lease in place
	}
	h.Clock.Advance(45 * time.Minute)
	h.auth(t, tokens[1])
	now = h.Clock.Advance(20 * time.Minute)
	_, released, err = h.ExpireReservations(ctx, now, time.Hour, 100)
	if err != nil || released != 0 {
		// carol's leases expired by themselves at 30 minutes: nothing to release.
		t.Fatalf("released %d, %v; want 0", released, err)
	}
	// A long lease outlives silence: released once carol is silent for an hour.
	if _, _, err := h.ReservePaths(ctx, agents[2], hub.ReservationRequest{Patterns: []string{"carol"}, TTL: 8 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	h.auth(t, tokens[2])
	h.Clock.Advance(59 * time.Minute)
	h.auth(t, tokens[1])
	if _, released, _ = h.ExpireReservations(ctx, h.Clock.Now(), time.Hour, 100); released != 0 {
		t.Fatalf("carol silent for 59m: released %d, want 0", released)
	}
	h.Clock.Advance(time.Minute)
	h.auth(t, tokens[1])
	if _, released, _ = h.ExpireReservations(ctx, h.Clock.Now(), time.Hour, 100); released != 1 {
		t.Fatalf("carol silent for 1h: released %d, want 1", released)
	}
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 1 || got[0] != "bob:bob" {
		t.Errorf("left: %v, want bob:bob", got)
	}
	if evs := reservationEvents(t, h, "carol"); len(evs) != 1 || !strings.Contains(evs[0].Detail, "no call since") {
		t.Errorf("carol's events = %+v, want one saying no call since", evs)
	}
}

func TestForceReleaseReservation(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice := h.agents(t, "alice")[0]
	rs, _ := h.reserve(t, alice, hub.ReservationExclusive, "src")
	r, err := h.ForceReleaseReservation(ctx, rs[0].ID, "alice crashed")
	if err != nil || r.Pattern != "src" || r.AgentName != "alice" {
		t.Fatalf("ForceReleaseReservation = %+v, %v", r, err)
	}
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 0 {
		t.Errorf("after force-release: %v, want none", got)
	}
	evs := reservationEvents(t, h, "alice")
	if len(evs) != 1 || !strings.Contains(evs[0].Detail, "src") || !strings.Contains(evs[0].Detail, "alice crashed") {
		t.Errorf("events = %+v, want one naming src and the reason", evs)
	}
	_, err = h.ForceReleaseReservation(ctx, rs[0].ID, "")
	wantCode(t, "force-release twice", err, hub.ENOTFOUND)
}

func TestRenewAndReleaseReservations(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	rs, _ := h.reserve(t, alice, hub.ReservationExclusive, "src", "lib", "docs")
	bobs, _, err := h.ReservePaths(ctx, bob, hub.ReservationRequest{Patterns: []string{"test"}, Mode: hub.ReservationShared, TTL: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	h.Clock.Advance(20 * time.Minute)
	renewed, err := h.RenewReservations(ctx, alice, []int64{rs[0].ID}, time.Hour)
	if err != nil || len(renewed) != 1 || !renewed[0].ExpiresAt.Equal(h.Clock.Now().Add(time.Hour)) {
		t.Fatalf("Renew = %+v, %v; want one expiring at %v", renewed, err, h.Clock.Now().Add(time.Hour))
	}
	if kept, err := h.RenewReservations(ctx, alice, []int64{rs[0].ID}, time.Minute); err != nil || !kept[0].ExpiresAt.Equal(renewed[0].ExpiresAt) {
		t.Errorf("renewing for less than is left = %+v, %v; want the lease kept at %v", kept, err, renewed[0].ExpiresAt)
	}
	_, err = h.RenewReservations(ctx, alice, []int64{bobs[0].ID}, 0)
	wantCode(t, "renew another's reservation", err, hub.ENOTFOUND)
	_, err = h.RenewReservations(ctx, alice, nil, 48*time.Hour)
	wantCode(t, "renew for 48h", err, hub.EINVALID)

	h.Clock.Advance(15 * time.Minute) // lib and docs expired, src renewed
	if got := h.reservations(t, hub.ReservationFilter{Agent: "alice"}); len(got) != 1 || got[0] != "alice:src" {
		t.Errorf("alice holds %v, want only the renewed src", got)
	}
	h.reserve(t, alice, hub.ReservationExclusive, "lib", "docs")
	gone, err := h.ReleasePaths(ctx, alice, nil, []string{"lib/"})
	if err != nil || len(gone) != 1 || gone[0].Pattern != "lib" {
		t.Fatalf("release lib/ = %+v, %v", gone, err)
	}
	if gone, err = h.ReleasePaths(ctx, alice, nil, []string{"lib"}); err != nil || len(gone) != 0 {
		t.Errorf("releasing lib again = %+v, %v; want nothing released, no error", gone, err)
	}
	if gone, err = h.ReleasePaths(ctx, alice, []int64{bobs[0].ID}, nil); err != nil || len(gone) != 0 {
		t.Errorf("alice releasing bob's reservation = %+v, %v; want nothing released", gone, err)
	}
	if gone, err = h.ReleasePaths(ctx, alice, nil, nil); err != nil || len(gone) != 2 {
		t.Errorf("release all = %d, %v; want src and docs", len(gone), err)
	}
	if got := h.reservations(t, hub.ReservationFilter{}); len(got) != 1 || got[0] != "bob:test" {
		t.Errorf("left %v, want bob:test", got)
	}
}
