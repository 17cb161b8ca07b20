package crash

import (
	"database/sql"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// integrity copies the killed hub's database files, as the kill left them,
// and checks the copy: PRAGMA integrity_check and foreign_key_check, and
// that acknowledged activity logs and checkpoints are there once. The hub
// recovers the original itself on its next start.
func integrity(t *testing.T, dataDir, snapDir string, led *ledger, st *stats) {
	t.Helper()
	os.RemoveAll(snapDir)
	if err := os.MkdirAll(snapDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hub.db", "hub.db-wal"} {
		if err := copyFile(filepath.Join(dataDir, name), filepath.Join(snapDir, name)); err != nil {
			if name == "hub.db-wal" && os.IsNotExist(err) {
				continue
			}
			t.Fatalf("copy %s: %v", name, err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(snapDir, "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	var res []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		res = append(res, s)
	}
	rows.Close()
	if len(res) != 1 || res[0] != "ok" {
		t.Fatalf("PRAGMA integrity_check after kill -9: %q", res)
	}
	var fk int
	if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil {
		t.Fatalf("foreign_key_check: %v", err)
	}
	if fk != 0 {
		t.Errorf("PRAGMA foreign_key_check after kill -9: %d violations", fk)
	}
	st.integrityChecks++

	led.mu.Lock()
	logs := maps.Clone(led.logs)
	cps := maps.Clone(led.checkpoints)
	led.mu.Unlock()
	if tb := findTable(t, db, "activit", "title"); len(logs) > 0 && tb != "" {
		checkTexts(t, db, tb, "title", logs)
		st.logsVerified = true
	}
	if tb := findTable(t, db, "checkpoint", "current_activity"); len(cps) > 0 && tb != "" {
		checkTexts(t, db, tb, "current_activity", cps)
		st.checkpointsVerified = true
	}
}

// checkTexts checks that every acknowledged text is in column of table
// exactly once.
func checkTexts(t *testing.T, db *sql.DB, table, column string, want map[string]bool) {
	t.Helper()
	counts := map[string]int{}
	rows, err := db.Query(fmt.Sprintf(`SELECT %s, COUNT(*) FROM %s WHERE %s LIKE 'crash %%' GROUP BY 1`, column, table, column))
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	for rows.Next() {
		var s string
		var n int
		rows.Scan(&s, &n)
		counts[s] = n
	}
	rows.Close()
	missing := 0
	for s := range want {
		if counts[s] == 0 {
			if missing++; missing <= 5 {
				t.Errorf("acknowledged %s %q is missing after kill -9", table, s)
			}
		}
	}
	for s, n := range counts {
		if n > 1 {
			t.Errorf("%s %q is stored %d times", table, s, n)
		}
	}
}

func findTable(t *testing.T, db *sql.DB, hint, column string) string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?`, "%"+hint+"%")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	rows.Close()
	for _, tb := range tables {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, tb, column).Scan(&n); err == nil && n > 0 {
			return tb
		}
	}
	return ""
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
