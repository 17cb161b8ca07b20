package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
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
	// bare plans each statement with its parameters NULL: the plan it is
	// prepared with, whatever the values. A plan that needs a parameter's value (a partial
	// index, whose condition a bound value meets) is prepared again every
	// time the statement runs with it bound anew.
	bare bool
}

func (d planDB) plan(q string, args ...any) {
	if d.bare {
		args = make([]any, len(args))
	}
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
	return d.raw.QueryRow(`SELECT 1 WHERE 0`)
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
// and the task an agent holds, read at each of its usage reports, from
// the plan it is prepared with (not prepared again at each report).
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
		bare  bool
	}{
		{"retirement candidates", func(db planDB) error {
			_, err := storesql.Statements{DB: db, Dialect: dialect}.RetireCandidates(t0, t0, 100)
			return err
		}, "SEARCH a USING INDEX agents_silence", false},
		{"tasks the nudged agents hold", func(db planDB) error {
			_, err := tasksql.Tx{DB: db}.TasksClaimedBy([]int64{1, 2, 3})
			return err
		}, "USING INDEX tasks_assignee", false},
		{"the task an agent reporting usage holds", func(db planDB) error {
			_, err := usagesql.Usage{DB: db}.HeldTask(1)
			return err
		}, "USING INDEX tasks_assignee", true},
	} {
		var plans []string
		if err := c.run(planDB{t, raw, &plans, c.bare}); err != nil {
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

// emptyStore opens a new store's database, migrated and empty, read-only
// for EXPLAIN QUERY PLAN.
func emptyStore(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hub.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite3", "file:"+uriPath(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// TestWaitLookReadsFromTheInbox checks that a wait's look (LookInbox)
// reads the agent by its key and its deliveries from the inbox's own key,
// after the cursor given or the agent's read cursor, already in order:
// no scan, no sort.
func TestWaitLookReadsFromTheInbox(t *testing.T) {
	raw := emptyStore(t)
	for _, fromReadCursor := range []bool{false, true} {
		var plans []string
		x := storesql.Statements{DB: planDB{t, raw, &plans, true}, Dialect: dialect}
		if _, err := x.LookInbox(1, 5, fromReadCursor, 20); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Fatalf("LookInbox with no rows: %v, want ENOTFOUND", err)
		}
		if len(plans) != 2 {
			t.Fatalf("%d statements %q, want the look's and, finding none, the agent's", len(plans), plans)
		}
		for _, want := range []string{"SEARCH a USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH d USING PRIMARY KEY (agent_id=? AND message_id>?)"} {
			if !strings.Contains(plans[0], want) || strings.Contains(plans[0], "SCAN ") || strings.Contains(plans[0], "TEMP B-TREE") {
				t.Errorf("from the read cursor %v: plan %q, want %q, no scan and no sort", fromReadCursor, plans[0], want)
			}
		}
	}
}

// TestHostNoteFindsTheCallByItsKey checks that a host's note that a tool
// ran finds the agent's approval of that call by the agent and the key,
// newest first from the index itself: through the items' state it read
// every open item of every agent when none matched, at every tool call.
func TestHostNoteFindsTheCallByItsKey(t *testing.T) {
	raw := emptyStore(t)
	for _, state := range []hub.ItemState{hub.ItemOpen, hub.ItemExpired} {
		var plans []string
		x := storesql.Statements{DB: planDB{t, raw, &plans, false}, Dialect: dialect}
		if _, err := x.ListInboxItems(hub.ItemQuery{AgentID: 1, State: state, CallKey: "k", Limit: 1}); err != nil {
			t.Fatal(err)
		}
		want := "SEARCH i USING INDEX inbox_items_call (agent_id=? AND call_key=? AND state=?)"
		if len(plans) != 1 || !strings.Contains(plans[0], want) || strings.Contains(plans[0], "TEMP B-TREE") {
			t.Errorf("the %s item of a call: plans %q, want %q and no sort", state, plans, want)
		}
	}
}
