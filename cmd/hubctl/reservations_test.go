package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

func TestReservationsCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	for _, name := range []string{"alice", "bob"} {
		a, err := h.m.Services.Agents.Authenticate(ctx, h.addAgent(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.m.Services.Reservations.ReservePaths(ctx, a, hub.ReservationRequest{Patterns: []string{name + "/"}, Reason: name + " works"}); err != nil {
			t.Fatal(err)
		}
	}
	out := h.hubctl(t, nil, "reservations").must(t).stdout
	for _, want := range []string{"PATTERN", "alice", "bob", "exclusive", "bob works"} {
		if !strings.Contains(out, want) {
			t.Errorf("reservations output lacks %q:\n%s", want, out)
		}
	}
	out = h.hubctl(t, nil, "reservations", "list", "alice/src/main.go").must(t).stdout
	if !strings.Contains(out, "alice") || strings.Contains(out, "bob") {
		t.Errorf("reservations list alice/src/main.go:\n%s\nwant alice's only", out)
	}
	js := h.hubctl(t, nil, "reservations", "list", "--agent", "bob", "-o", "json").must(t).stdout
	if !strings.Contains(js, `"pattern": "bob"`) || strings.Contains(js, "alice") {
		t.Errorf("reservations list --agent bob -o json:\n%s", js)
	}
	if r := h.hubctl(t, nil, "reservations", "list", "../x"); r.code != 1 || !strings.Contains(r.stderr, "..") {
		t.Errorf("list ../x: exit %d %q, want 1 naming ..", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "reservations", "release"); r.code != 2 {
		t.Errorf("release without ID: exit %d, want 2", r.code)
	}
	rs, err := h.m.Services.Reservations.ListReservations(ctx, hub.ReservationFilter{Agent: "alice"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("alice's reservations: %v, %v", rs, err)
	}
	id := strconv.FormatInt(rs[0].ID, 10)
	out = h.hubctl(t, nil, "reservations", "release", id, "--reason", "stale").must(t).stdout
	if !strings.Contains(out, "released "+id+": alice (exclusive) of alice") {
		t.Errorf("release output: %s", out)
	}
	evs := h.hubctl(t, nil, "events", "--kind", "reservation_released").must(t).stdout
	if !strings.Contains(evs, "stale") {
		t.Errorf("events after release lack the reason:\n%s", evs)
	}
	if r := h.hubctl(t, nil, "reservations", "release", id); r.code != 1 {
		t.Errorf("releasing twice: exit %d, want 1 (not found)", r.code)
	}

	// The whole project exclusively: the admin's, for an agent.
	out = h.hubctl(t, nil, "reservations", "reserve", "--agent", "bob", "--reason", "release freeze", "**").must(t).stdout
	if !strings.HasPrefix(out, "reserved ") || !strings.Contains(out, ": ** (exclusive) for bob until") {
		t.Errorf("reserve ** for bob:\n%s", out)
	}
	rs, err = h.m.Services.Reservations.ListReservations(ctx, hub.ReservationFilter{Agent: "bob", Paths: []string{"README.md"}})
	if err != nil || len(rs) != 1 || rs[0].Pattern != "**" || rs[0].Reason != "release freeze" {
		t.Errorf("bob's reservations over README.md: %+v, %v; want ** with the reason", rs, err)
	}
	if r := h.hubctl(t, nil, "reservations", "reserve", "**"); r.code != 2 {
		t.Errorf("reserve without --agent: exit %d, want 2", r.code)
	}
	if r := h.hubctl(t, nil, "reservations", "reserve", "--agent", "nobody", "src"); r.code != 1 || !strings.Contains(r.stderr, "nobody") {
		t.Errorf("reserve for an unknown agent: exit %d %q, want 1 naming it", r.code, r.stderr)
	}
}
