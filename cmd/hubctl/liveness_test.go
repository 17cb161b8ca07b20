package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

func TestLivenessCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	svc := h.m.Services
	ada, _, err := svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "bo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Liveness.StartDeepWork(ctx, ada, hub.StartDeepWorkRequest{Mode: "strict", PlannedActivity: "render the book", PlannedMinutes: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Liveness.CreateActivityLog(ctx, ada, hub.ActivityLog{Type: "creation", Title: "rendered"}); err != nil {
		t.Fatal(err)
	}

	r := h.hubctl(t, nil, "health").must(t)
	for _, want := range []string{"AGENT", "HEALTH", "ada", "bo", "healthy"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("health lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.hubctl(t, nil, "health", "ada").must(t)
	for _, want := range []string{"agent:", "ada", "reflection due:", "yes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("health ada lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.hubctl(t, nil, "-o", "json", "health", "ada").must(t)
	var hs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &hs); err != nil || len(hs) != 1 || hs[0]["state"] != "healthy" || hs[0]["reflection_due"] != true {
		t.Errorf("health -o json = %v (%v):\n%s", hs, err, r.stdout)
	}

	r = h.hubctl(t, nil, "events", "--agent", "ada").must(t)
	for _, want := range []string{"KIND", "deep_work_started", "deep_work_completed", "render the book"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("events lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.hubctl(t, nil, "events", "--kind", "deep_work_started", "--since", "1h", "-o", "json").must(t)
	var evs struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &evs); err != nil || len(evs.Events) != 1 || evs.Events[0]["agent"] != "ada" {
		t.Errorf("events -o json = %+v (%v)", evs, err)
	}

	r = h.hubctl(t, nil, "deepwork", "ada").must(t)
	for _, want := range []string{"MODE", "strict", "completed", "render the book"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("deepwork lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.hubctl(t, nil, "deepwork", "--state", "active").must(t)
	if !strings.Contains(r.stdout, "no deep work declarations") {
		t.Errorf("deepwork --state active:\n%s", r.stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"health", "nobody"}, 1, "nobody"},
		{[]string{"events", "--since", "yesterday"}, 2, "neither a duration"},
		{[]string{"events", "ada"}, 2, "--agent NAME"},
		{[]string{"events", "--kind", "Bad-Kind"}, 1, "not an event kind"},
		{[]string{"deepwork", "--state", "bogus"}, 1, "expected active, completed or expired"},
	} {
		r := h.hubctl(t, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hubctl %q: exit %d, stderr %q; want exit %d with %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}
