package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/storesql"
	"github.com/agenthub/hub/internal/store/tasksql"
	"github.com/agenthub/hub/internal/store/usagesql"
)

// planDB is a storesql.DB that runs no statement: it records the query
// plan SQLite makes for each (EXPLAIN QUERY PLAN) and returns no rows.
type planDB struct {
	t     *testing.T
	raw   *sql.DB
	plans *[]string
}

func (d planDB) plan(q string, args ...any) {
	rows, err := d.raw.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		d.t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			d.t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	*d.plans = append(*d.plans, strings.Join(lines, "; "))
}

func (d planDB) Exec(q string, args ...any) (int64, error) { d.plan(q, args...); return 0, nil }

func (d planDB) Query(q string, args ...any) (storesql.Rows, func(), error) {
	d.plan(q, args...)
	return noRows{}, func() {}, nil
}

func (d planDB) QueryRow(q string, args ...any) row.Scanner {
	d.plan(q, args...)
	return mappedRow{d.raw.QueryRow(`SELECT 1 WHERE 0`)}
}

func (planDB) IsNoRows(err error) bool { return err == sql.ErrNoRows }

func (d planDB) ExecRows(storesql.Batch, []any, func(row.Scanner) error) error {
	d.t.Fatal("the tick's due reads write no rows")
	return nil
}

type noRows struct{}

func (noRows) Next() bool        { return false }
func (noRows) Scan(...any) error { return nil }
func (noRows) Err() error        { return nil }

// TestTickReadsFromAnIndex checks that the tick's reads of due work that
// the two stores share search an index for what is due rather than scan a
// table: the retirement candidates (by the time each agent has been silent
// since; by its last call alone, every agent that never called was read at
// every tick) and the tasks the nudged agents hold (one read per batch);
// and so does an export's read of the task its agent holds. The plans are
// made as the hub's connections make them, without the values bound
// (plans.go): an index of claimed tasks only is found from a literal.
func TestTickReadsFromAnIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hub.db")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := SeedAgents(ctx, path, 100, t0, t0, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, c := range []struct {
		name  string
		run   func(db planDB) error
		index string
	}{
		{"retirement candidates", func(db planDB) error {
			_, err := storesql.Statements{DB: db, Dialect: dialect}.RetireCandidates(t0, t0, 100)
			return err
		}, "SEARCH a USING INDEX agents_silence"},
		{"tasks the nudged agents hold", func(db planDB) error {
			_, err := tasksql.Tx{DB: db}.TasksClaimedBy([]int64{1, 2, 3})
			return err
		}, "USING INDEX tasks_assignee"},
		{"the task an exporting agent holds", func(db planDB) error {
			_, err := usagesql.Usage{DB: db}.HeldTask(1)
			return err
		}, "USING INDEX tasks_assignee"},
	} {
		var plans []string
		if err := c.run(planDB{t, raw, &plans}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(plans) != 1 {
			t.Fatalf("%s: %d statements %q, want one", c.name, len(plans), plans)
		}
		if !strings.Contains(plans[0], c.index) || strings.Contains(plans[0], "SCAN a") || strings.Contains(plans[0], "SCAN t") {
			t.Errorf("%s: plan %q, want a search of %q and no scan", c.name, plans[0], c.index)
		}
	}
}
