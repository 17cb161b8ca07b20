package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthub/hub/internal/mcpbridge"
)

// toolsListBudget is the most characters tools/list may take: every agent
// pays for it at the start of every session.
const toolsListBudget = 9000

func TestToolsListFitsTheBudget(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	cs := bridge(t, h.GRPCAddress(), h.createAgent(t, "counter"), mcpbridge.Options{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d characters of JSON", len(res.Tools), len(b))
	for _, tool := range res.Tools {
		tb, _ := json.Marshal(tool)
		t.Logf("  %-28s %5d", tool.Name, len(tb))
	}
	if len(b) > toolsListBudget {
		t.Errorf("tools/list is %d characters, over the budget of %d: shorten descriptions or schemas", len(b), toolsListBudget)
	}
}
