package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// hubctl budgets: set, list (table and -o json), a bad limit refused
// naming what is expected, a budget item raised from the inbox, rm.
func TestBudgetsCommands(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	if out := h.hubctl(t, nil, "budgets").must(t).stdout; !strings.Contains(out, "no budgets") {
		t.Errorf("budgets of an empty hub: %q", out)
	}
	tok := h.addAgent(t, "dev")
	out := h.hubctl(t, nil, "budgets", "set", "--agent", "dev", "--usd-per-day", "1").must(t).stdout
	if !strings.Contains(out, "budget of agent dev set: usd 0.00 / 1.00, tokens - today; ok") {
		t.Errorf("set printed %q", out)
	}
	h.hubctl(t, nil, "budgets", "set", "--project", "default", "--tokens-per-day", "1000000").must(t)
	if r := h.hubctl(t, nil, "budgets", "set", "--agent", "dev", "--usd-per-day", "-3"); r.code != 1 || !strings.Contains(r.stderr, "usd_per_day -3 is not an amount") {
		t.Errorf("a negative limit: code %d, stderr %q", r.code, r.stderr)
	}
	if r := h.hubctl(t, nil, "budgets", "set", "--agent", "nobody", "--usd-per-day", "3"); r.code != 1 || !strings.Contains(r.stderr, "nobody") {
		t.Errorf("an unknown agent: code %d, stderr %q", r.code, r.stderr)
	}

	ctx := context.Background()
	a, err := h.m.Services.Agents.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.m.Services.Usage.Record(ctx, a, []hub.UsageDelta{{Model: "m", Counts: hub.UsageCounts{Input: 100, Requests: 1, CostUSD: 1.25}}}, ""); err != nil {
		t.Fatal(err)
	}
	list := h.hubctl(t, nil, "budgets", "list").must(t).stdout
	if !regexp.MustCompile(`(?m)^project default\s+-\s+100 / 1000000\s+ok\s+operator$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^agent dev\s+1\.25 / 1\.00\s+-\s+reached\s+operator$`).MatchString(list) {
		t.Errorf("budgets list:\n%s", list)
	}
	var js struct {
		Budgets []struct {
			Agent    string  `json:"agent"`
			State    string  `json:"state"`
			SpentUSD float64 `json:"spent_usd"`
		} `json:"budgets"`
	}
	if err := json.Unmarshal([]byte(h.hubctl(t, nil, "budgets", "--agent", "dev", "-o", "json").must(t).stdout), &js); err != nil ||
		len(js.Budgets) != 1 || js.Budgets[0].Agent != "dev" || js.Budgets[0].State != "reached" || js.Budgets[0].SpentUSD != 1.25 {
		t.Errorf("budgets -o json = %+v (%v)", js, err)
	}

	inbox := h.hubctl(t, nil, "inbox").must(t).stdout
	m := regexp.MustCompile(`(?m)^(\d+)\s+budget \(urgent\)\s+dev\s+default\s+Budget of agent dev reached by dev`).FindStringSubmatch(inbox)
	if m == nil {
		t.Fatalf("inbox:\n%s", inbox)
	}
	if r := h.hubctl(t, nil, "inbox", "answer", m[1], "raise", "--usd-per-day", "1.1"); r.code != 1 || !strings.Contains(r.stderr, "still reached today") {
		t.Errorf("raise below the spend: code %d, stderr %q", r.code, r.stderr)
	}
	out = h.hubctl(t, nil, "inbox", "answer", m[1], "raise", "--usd-per-day", "5").must(t).stdout
	if !strings.Contains(out, "raised the budget (item "+m[1]+") as operator; dev is told") {
		t.Errorf("raise printed %q", out)
	}
	if list := h.hubctl(t, nil, "budgets").must(t).stdout; !regexp.MustCompile(`(?m)^agent dev\s+1\.25 / 5\.00\s+-\s+ok`).MatchString(list) {
		t.Errorf("after the raise:\n%s", list)
	}

	h.hubctl(t, nil, "budgets", "rm", "--agent", "dev").must(t)
	if r := h.hubctl(t, nil, "budgets", "rm", "--agent", "dev"); r.code != 1 || !strings.Contains(r.stderr, "agent dev has no budget") {
		t.Errorf("rm again: code %d, stderr %q", r.code, r.stderr)
	}
}
