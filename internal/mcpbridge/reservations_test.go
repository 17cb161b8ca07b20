package mcpbridge_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/mcpbridge"
)

func TestReservationTools(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := bridge(t, h.GRPCAddress(), h.createAgent(t, "alice"), mcpbridge.Options{}, nil)
	bob := bridge(t, h.GRPCAddress(), h.createAgent(t, "bob"), mcpbridge.Options{}, nil)

	var got mcpbridge.ReservationsOutput
	res := mustCall(t, alice, "reserve_paths", map[string]any{"paths": []string{"internal/hub/", "docs/*.md"}, "ttl_seconds": 600, "reason": "refactor"}, &got)
	if len(got.Reservations) != 2 || got.Reservations[0].Agent != "alice" || got.Reservations[0].Mode != "exclusive" {
		t.Fatalf("reserve_paths = %+v, want two exclusive reservations of alice", got)
	}
	if !strings.Contains(resultText(res), "internal/hub exclusive by alice") {
		t.Errorf("reserve_paths text %q does not list the reservation", resultText(res))
	}

	// bob's exclusive request over alice's is a tool error naming her.
	res = call(t, bob, "reserve_paths", map[string]any{"paths": []string{"internal/hub/store.go"}}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "alice") {
		t.Errorf("exclusive over alice's: error %v, text %q; want a tool error naming alice", res.IsError, resultText(res))
	}
	// Shared is granted, with the overlap named.
	var shared mcpbridge.ReservationsOutput
	res = mustCall(t, bob, "reserve_paths", map[string]any{"paths": []string{"internal/hub/store.go"}, "mode": "shared"}, &shared)
	if len(shared.Conflicts) != 1 || shared.Conflicts[0].Held.Agent != "alice" || !strings.Contains(resultText(res), "Overlap") {
		t.Errorf("shared over alice's = %+v (%q), want her reservation named", shared, resultText(res))
	}
	res = call(t, bob, "reserve_paths", map[string]any{"paths": []string{"../outside"}}, nil)
	if !res.IsError || !strings.Contains(resultText(res), "..") {
		t.Errorf("reserve ../outside: error %v, text %q; want a tool error about ..", res.IsError, resultText(res))
	}

	var list mcpbridge.ReservationsOutput
	mustCall(t, bob, "list_reservations", map[string]any{"paths": []string{"internal/hub/agent.go"}}, &list)
	if len(list.Reservations) != 1 || list.Reservations[0].Pattern != "internal/hub" {
		t.Errorf("list_reservations by path = %+v, want alice's internal/hub", list)
	}
	mustCall(t, bob, "list_reservations", map[string]any{"holder": "alice"}, &list)
	if len(list.Reservations) != 2 {
		t.Errorf("list_reservations agent=alice = %+v, want 2", list)
	}

	// Reserving again renews; IDs are accepted as integers or strings.
	id := got.Reservations[0].ID
	var renewed mcpbridge.ReservationsOutput
	mustCall(t, alice, "reserve_paths", map[string]any{"paths": []string{"internal/hub"}, "ttl_seconds": 3600}, &renewed)
	if len(renewed.Reservations) != 1 || renewed.Reservations[0].ID != id || renewed.Reservations[0].ExpiresAt == got.Reservations[0].ExpiresAt {
		t.Errorf("reserve_paths again = %+v, want %s with a later expiry than %s", renewed, id, got.Reservations[0].ExpiresAt)
	}
	res = call(t, bob, "release_paths", map[string]any{"ids": []any{jsonNumber(t, id)}}, nil)
	if res.IsError || strings.Contains(resultText(res), "internal/hub") {
		t.Errorf("bob releasing alice's reservation: %q, want nothing released", resultText(res))
	}

	var released mcpbridge.ReservationsOutput
	mustCall(t, alice, "release_paths", map[string]any{"ids": []string{id}}, &released)
	if len(released.Reservations) != 1 || released.Reservations[0].Pattern != "internal/hub" {
		t.Errorf("release_paths by id = %+v", released)
	}
	mustCall(t, alice, "release_paths", nil, &released)
	if len(released.Reservations) != 1 || released.Reservations[0].Pattern != "docs/*.md" {
		t.Errorf("release_paths with nothing = %+v, want the rest (docs/*.md)", released)
	}
	mustCall(t, bob, "list_reservations", map[string]any{"holder": "alice"}, &list)
	if len(list.Reservations) != 0 {
		t.Errorf("after release alice holds %+v", list.Reservations)
	}
}

// jsonNumber returns the ID as a JSON integer.
func jsonNumber(tb testing.TB, id string) int64 {
	tb.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		tb.Fatalf("ID %q is not a number", id)
	}
	return n
}
