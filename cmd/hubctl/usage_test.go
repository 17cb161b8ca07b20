package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// hubctl usage: the table and -o json of what agents spent; a bad
// grouping is refused naming the fields.
func TestUsageCommand(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	if r := h.hubctl(t, nil, "usage").must(t); !strings.Contains(r.stdout, "no usage reported") {
		t.Errorf("usage of an empty hub: %q", r.stdout)
	}
	tok := h.addAgent(t, "dev")
	ctx := context.Background()
	a, err := h.m.Services.Agents.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	err = h.m.Services.Usage.Record(ctx, a, []hub.UsageDelta{{Model: "claude-sonnet-4-5",
		Counts: hub.UsageCounts{Input: 120, Output: 45, CacheRead: 9000, CacheCreation: 300, Requests: 2, CostUSD: 0.0375}}}, "")

	if err != nil {
		t.Fatal(err)
	}
	out := h.hubctl(t, nil, "usage", "--by", "agent,model").must(t).stdout
	for _, want := range []string{"AGENT", "dev", "claude-sonnet-4-5", "120", "9000", "0.0375"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage table lacks %q:\n%s", want, out)
		}
	}
	var rep struct {
		Rows []struct {
			Agent           string  `json:"agent"`
			CacheReadTokens string  `json:"cache_read_tokens"`
			CostUSD         float64 `json:"cost_usd"`
		} `json:"rows"`
	}
	js := h.hubctl(t, nil, "usage", "--agent", "dev", "-o", "json").must(t).stdout
	if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.Rows) != 1 || rep.Rows[0].Agent != "dev" || rep.Rows[0].CacheReadTokens != "9000" || rep.Rows[0].CostUSD != 0.0375 {
		t.Errorf("usage -o json = %s (%v)", js, err)
	}
	if r := h.hubctl(t, nil, "usage", "--by", "colour"); r.code != 1 || !strings.Contains(r.stderr, "expected agent, project, task, model, day or hour") {
		t.Errorf("usage --by colour: exit %d, stderr %q", r.code, r.stderr)
	}
}
