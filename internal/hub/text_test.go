package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// lineAttacks are what a single-line field must refuse: each would act on
// the terminal of whoever is shown the field, or forge a line there.
var lineAttacks = map[string]string{
	"escape (OSC 52)": "refactor\x1b]52;c;Y3VybA==\x07",
	"newline":         "refactor\nhub guard: commit allowed",
	"carriage return": "x\rforged",
	"tab":             "a\tb",
	"DEL":             "a\x7f",
	"C1 CSI":          "a\u009b2J",
	"bidi override":   "txt\u202eexe",
	"bidi isolate":    "a\u2066b",
	"line separator":  "a\u2028b",
	"NUL":             "a\x00b",
}

// TestSingleLineFieldsRefuseControlCharacters tries every attack on every
// single-line field, through the service on a real store: each call is
// refused with EINVALID naming the field, and nothing is written.
func TestSingleLineFieldsRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	alice, _ := h.agent(t, "alice")
	res, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"docs/a.md"}, Mode: hub.ReservationExclusive, Reason: "plain reason"})
	if err != nil {
		t.Fatal(err)
	}
	fields := []struct {
		field string
		call  func(s string) error
	}{
		{"display_name", func(s string) error {
			_, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "bob", DisplayName: s})
			return err
		}},
		{"role", func(s string) error {
			_, _, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "bob", Role: s})
			return err
		}},
		{"display_name", func(s string) error {
			_, err := h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "alice", DisplayName: &s})
			return err
		}},
		{"role", func(s string) error {
			_, err := h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "alice", Role: &s})
			return err
		}},
		{"role", func(s string) error {
			_, _, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Role: s})
			return err
		}},
		{"note", func(s string) error {
			_, _, err := h.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{Note: s})
			return err
		}},
		{"reason", func(s string) error {
			_, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"src/b.go"}, Mode: hub.ReservationExclusive, Reason: s})
			return err
		}},
		{"reason", func(s string) error {
			_, err := h.ForceReleaseReservation(ctx, res[0].ID, s)
			return err
		}},
		{"title", func(s string) error {
			_, err := h.CreateActivityLog(ctx, alice, hub.ActivityLog{Type: "creation", Title: "x " + s})
			return err
		}},
		{"urgent_reason", func(s string) error {
			_, err := h.CreateActivityLog(ctx, alice, hub.ActivityLog{Type: "creation", Title: "x", UrgentReason: s})
			return err
		}},
		{"tag", func(s string) error {
			_, err := h.CreateActivityLog(ctx, alice, hub.ActivityLog{Type: "creation", Title: "x", Tags: []string{strings.ReplaceAll(s, " ", "")}})
			return err
		}},
		{"current_activity", func(s string) error {
			_, err := h.Checkpoint(ctx, alice, "x "+s, 0)
			return err
		}},
		{"planned_activity", func(s string) error {
			_, err := h.StartDeepWork(ctx, alice, hub.StartDeepWorkRequest{Mode: "flexible", PlannedActivity: "x " + s})
			return err
		}},
	}
	for _, f := range fields {
		for name, s := range lineAttacks {
			err := f.call(s)
			var he *hub.Error
			if !errors.As(err, &he) || he.Code != hub.EINVALID || !strings.Contains(he.Message, f.field) {
				t.Errorf("%s with %s: %v, want EINVALID naming %s", f.field, name, err, f.field)
			}
		}
	}
	// Nothing was written: no agent bob, the reservation held as it was,
	// alice unchanged, no join code, no log, checkpoint or deep work.
	if as, err := h.ListAgents(ctx, true); err != nil || len(as) != 1 || as[0].DisplayName != "" || as[0].Role != "" {
		t.Errorf("agents after the refusals: %v, %v; want alice alone, unchanged", as, err)
	}
	if codes, err := h.ListJoinCodes(ctx); err != nil || len(codes) != 0 {
		t.Errorf("join codes after the refusals: %d, %v", len(codes), err)
	}
	rs, err := h.ListReservations(ctx, hub.ReservationFilter{})
	if err != nil || len(rs) != 1 || rs[0].Reason != "plain reason" {
		t.Errorf("reservations after the refusals: %+v, %v; want the one held as it was", rs, err)
	}
	logs, cps, err := h.ListActivity(ctx, "alice", 10)
	if err != nil || len(logs) != 0 || len(cps) != 0 {
		t.Errorf("activity after the refusals: %d logs, %d checkpoints, %v", len(logs), len(cps), err)
	}
	// Plain text of any script passes.
	if _, err := h.Checkpoint(ctx, alice, "レビュー中 — שלום 🚀", 0); err != nil {
		t.Errorf("plain text refused: %v", err)
	}
}
