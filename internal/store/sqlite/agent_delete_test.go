package sqlite

import (
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storetest"
)

// The deletion of an agent, looking into every table.
func TestAgentDelete(t *testing.T) {
	storetest.RunAgentDelete(t, freshFile, func(tx hub.Tx, query string) (n int64, err error) {
		err = tx.(*Tx).queryRow(query).Scan(&n)
		return n, err
	})
}
