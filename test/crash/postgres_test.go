package crash

import (
	"database/sql"
	"maps"
	"testing"

	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql on PostgreSQL, for the checks
)

// pgCycles is the default cycle count on PostgreSQL: few, so that CI stays
// short (-crash.cycles or $CRASH_CYCLES ask for more).
const pgCycles = 4

// TestCrashDurabilityPostgres runs the harness on a fresh PostgreSQL
// database (HUB_TEST_DATABASE_URL; skipped without it): kill -9 of the hub
// must lose no acknowledged write there either. After each kill the
// acknowledged activity logs and checkpoints are looked for in the
// database; the server itself is not killed, so there is no file to check.
func TestCrashDurabilityPostgres(t *testing.T) {
	url := pgtest.Database(t)
	n := pgCycles
	if asked := askedCycles(); asked > 0 {
		n = asked
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	flags := []string{"--rate-limit", "0", "--database-url", url}
	runHarness(t, n, t.TempDir(), flags, func(led *ledger, st *stats) {
		led.mu.Lock()
		logs, cps := maps.Clone(led.logs), maps.Clone(led.checkpoints)
		led.mu.Unlock()
		checkTexts(t, db, "activity_logs", "title", logs)
		checkTexts(t, db, "checkpoints", "current_activity", cps)
		st.integrityChecks++
		st.logsVerified, st.checkpointsVerified = true, true
	})
}
