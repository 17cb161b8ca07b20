package orchestrator_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// The reservations step expires leases and releases those of disabled and
// silent agents, each tick, on the fake clock.
func TestTickExpiresAndReleasesReservations(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(s *hub.ScheduleSettings) { s.ReservationReleaseAfter = 40 * time.Minute })
	_, aliceTok := r.agent("alice")
	_, bobTok := r.agent("bob")
	_, carolTok := r.agent("carol")
	reserve := func(tok, pattern string, ttl time.Duration) {
		t.Helper()
		if _, _, err := r.svc.Reservations.ReservePaths(r.ctx, r.call(tok), hub.ReservationRequest{Patterns: []string{pattern}, TTL: ttl}); err != nil {
			t.Fatalf("reserve %s: %v", pattern, err)
		}
	}
	reserve(aliceTok, "src", 10*time.Minute)
	reserve(bobTok, "lib", 8*time.Hour)
	reserve(carolTok, "docs", 8*time.Hour)
	if _, err := r.svc.Agents.SetAgentDisabled(r.ctx, "carol", true); err != nil {
		t.Fatal(err)
	}
	active := func() int {
		t.Helper()
		rs, err := r.svc.Reservations.ListReservations(r.ctx, hub.ReservationFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}

	if rep := r.tick(); rep.Reservations != 1 || active() != 2 {
		t.Fatalf("first tick ended %d reservations, %d left; want carol's (disabled) ended, 2 left", rep.Reservations, active())
	}
	if evs := r.events("carol", string(hub.EventReservationReleased)); len(evs) != 1 {
		t.Errorf("carol's release events = %d, want 1", len(evs))
	}
	r.clock.Advance(10 * time.Minute)
	r.call(bobTok)
	if rep := r.tick(); rep.Reservations != 1 || active() != 1 {
		t.Fatalf("at 10m: ended %d, %d left; want alice's lease expired, bob's left", rep.Reservations, active())
	}
	r.clock.Advance(39 * time.Minute)
	if rep := r.tick(); rep.Reservations != 0 {
		t.Fatalf("bob silent 39m: ended %d, want 0", rep.Reservations)
	}
	r.clock.Advance(time.Minute)
	if rep := r.tick(); rep.Reservations != 1 || active() != 0 {
		t.Fatalf("bob silent 40m: ended %d, %d left; want his released", rep.Reservations, active())
	}
}
