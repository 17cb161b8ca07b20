package migration

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	good := fstest.MapFS{
		"m/0002_more.sqlite.sql":   {Data: []byte("B1")},
		"m/0002_more.postgres.sql": {Data: []byte("B2")},
		"m/0001_core.sql":          {Data: []byte("A")},
		"m/0010_late.postgres.sql": {Data: []byte("C2")},
		"m/0010_late.sqlite.sql":   {Data: []byte("C1")},
	}
	for d, want := range map[Dialect]string{
		SQLite:     "0001_core.sql=A 0002_more.sql=B1 0010_late.sql=C1",
		PostgreSQL: "0001_core.sql=A 0002_more.sql=B2 0010_late.sql=C2",
	} {
		ms, err := load(good, "m", d)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Name+"="+m.SQL)
		}
		if strings.Join(got, " ") != want || ms[2].Version != 10 {
			t.Errorf("load(%s) = %v, want %s (version 10 last)", d, got, want)
		}
	}
	for name, fsys := range map[string]fstest.MapFS{
		"unnumbered":       {"m/core.sql": {}},
		"not sql":          {"m/0001_core.txt": {}},
		"same number":      {"m/0001_a.sql": {}, "m/01_b.sql": {}},
		"unknown dialect":  {"m/0001_a.mysql.sql": {}},
		"one dialect only": {"m/0001_a.sql": {}, "m/0002_b.sqlite.sql": {}},
		"common and one":   {"m/0001_a.sql": {}, "m/0001_a.postgres.sql": {}},
		"two names":        {"m/0001_a.sqlite.sql": {}, "m/0001_b.postgres.sql": {}},
	} {
		if _, err := load(fsys, "m", SQLite); err == nil {
			t.Errorf("%s: load succeeded, want an error", name)
		}
	}
}

// TestList checks the embedded list: every change in both dialects, under
// one number.
func TestList(t *testing.T) {
	t.Parallel()
	lite, err := List(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := List(PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones; want the same changes", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].Version != pg[i].Version || lite[i].Name != pg[i].Name {
			t.Errorf("migration %d: SQLite %s, PostgreSQL %s", i, lite[i].Name, pg[i].Name)
		}
	}
}

// legacyPostgreSQL is PostgreSQL's own numbering of the changes before the
// list was one.
var legacyPostgreSQL = []string{"0001_core.sql", "0002_liveness.sql", "0003_orchestrator.sql", "0004_reservations.sql",
	"0005_once.sql", "0006_receipts.sql", "0007_injections.sql", "0008_join_codes.sql", "0009_search.sql",
	"0010_inbox_counts.sql", "0012_projects.sql", "0013_lighter_nudges.sql", "0014_tasks.sql", "0015_inbox.sql", "0016_delivery.sql"}

func TestRenumber(t *testing.T) {
	t.Parallel()
	ms, err := List(PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Applied
	for _, name := range legacyPostgreSQL {
		var v int
		fmt.Sscanf(name, "%d", &v)
		rows = append(rows, Applied{Version: v, Name: name})
	}
	out, changed, err := Renumber(rows, ms)
	if err != nil || !changed {
		t.Fatalf("Renumber = %v, changed %v; want the rows renumbered", err, changed)
	}
	var got []string
	for _, a := range out {
		got = append(got, fmt.Sprintf("%d=%s", a.Version, a.Name))
	}
	want := "1=0001_core.sql 2=0002_liveness.sql 3=0003_orchestrator.sql 5=0005_reservations.sql 6=0006_once.sql " +
		"7=0007_receipts.sql 8=0008_injections.sql 9=0009_join_codes.sql 10=0010_search.sql 4=0004_inbox_counts.sql " +
		"12=0012_projects.sql 15=0015_lighter_nudges.sql 16=0016_tasks.sql 17=0017_inbox.sql 18=0018_delivery.sql"
	if strings.Join(got, " ") != want {
		t.Errorf("Renumber =\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	var pending []string
	for _, m := range Pending(out, ms[:18]) {
		pending = append(pending, m.Name)
	}
	if want := "0011_sent_without_rowid.sql 0013_events_created_dropped.sql 0014_search_readers.sql"; strings.Join(pending, " ") != want {
		t.Errorf("Pending = %v, want %s (the changes PostgreSQL had no text for)", pending, want)
	}
	again, changed, err := Renumber(out, ms)
	if err != nil || changed || len(again) != len(out) {
		t.Errorf("Renumber of renumbered rows: changed %v, %v; want nothing to change", changed, err)
	}
	if _, _, err := Renumber(append(out, Applied{Version: 99, Name: "0099_future.sql"}), ms); err == nil || !strings.Contains(err.Error(), "newer hub") {
		t.Errorf("Renumber of a newer hub's row: %v, want an error saying to run a newer hub", err)
	}
}
