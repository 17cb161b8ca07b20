package copystore

import (
	"slices"
	"testing"

	"github.com/agenthub/hub/internal/store/storetest"
)

// Every table copy-store knows (the whole schema) is in the checklist of
// the deletion test, which says which of its rows belong to an agent, and
// the other way round: a new table cannot be left out of an agent's
// deletion unnoticed.
func TestAgentDeleteChecksEveryTable(t *testing.T) {
	var checked []string
	for _, tb := range storetest.AgentTables {
		checked = append(checked, tb.Name)
	}
	known := slices.Concat(tableNames(), []string{"inbox_counts"}) // inbox_counts: bookkeeping, but per agent
	slices.Sort(checked)
	slices.Sort(known)
	if !slices.Equal(checked, known) {
		t.Errorf("tables the agent deletion test checks = %v\nthe tables of the schema (copy-store) = %v", checked, known)
	}
}
