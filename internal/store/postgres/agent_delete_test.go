package postgres

import (
	"testing"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/agenthub/hub/internal/store/storetest"
)

// The deletion of an agent, looking into every table, each test in a
// fresh schema.
func TestAgentDelete(t *testing.T) {
	pgtest.URL(t)
	storetest.RunAgentDelete(t, func(tb testing.TB) func() hub.Store {
		u := pgtest.Schema(tb)
		return func() hub.Store { return openTest(tb, u) }
	}, func(tx hub.Tx, query string) (n int64, err error) {
		err = tx.(*Tx).queryRow(query).Scan(&n)
		return n, err
	})
}
