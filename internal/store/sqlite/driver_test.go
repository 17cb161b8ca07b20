package sqlite

import (
	"database/sql"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// TestDriverScan reads each kind of column into each kind of destination
// the store's scans use, on the driver connection, and checks what
// database/sql would have refused is refused with an error naming it.
func TestDriverScan(t *testing.T) {
	db := newDB(t)
	mustView(t, db, func(tx hub.Tx) error {
		x := tx.(*Tx)
		var (
			i64    int64
			i      int
			i32    int32
			u8     uint8
			s      string
			kind   hub.SenderKind
			b      []byte
			ok     bool
			f      float64
			null   sql.NullInt64
			nullB  []byte
			nullS  sql.NullString
			intTxt string
		)
		nullB = []byte("not yet")
		err := x.queryRow(`SELECT ?, ?, ?, ?, ?, ?, X'0102', 1, 2.5, NULL, NULL, NULL, 42`,
			int64(math.MaxInt64), 7, int32(-3), 200, "text", "agent").
			Scan(&i64, &i, &i32, &u8, &s, &kind, &b, &ok, &f, &null, &nullB, &nullS, &intTxt)
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if i64 != math.MaxInt64 || i != 7 || i32 != -3 || u8 != 200 || s != "text" || kind != hub.SenderKind("agent") ||
			string(b) != "\x01\x02" || !ok || f != 2.5 || null.Valid || nullB != nil || nullS.Valid || intTxt != "42" {
			t.Errorf("scanned %v %v %v %v %q %q %x %v %v %v %v %v %q", i64, i, i32, u8, s, kind, b, ok, f, null, nullB, nullS, intTxt)
		}
		return nil
	})
}

// TestDriverScanErrors checks that a value that does not fit its
// destination, and a destination the store does not scan into, are
// errors naming the column and the types, not silent zeros.
func TestDriverScanErrors(t *testing.T) {
	db := newDB(t)
	for _, c := range []struct {
		name, q string
		dest    func() []any
		want    string
	}{
		{"NULL into an integer", `SELECT NULL AS n`, func() []any { return []any{new(int64)} }, "scan column 1 (n): NULL is not an integer"},
		{"NULL into a text", `SELECT NULL AS t`, func() []any { return []any{new(string)} }, "NULL is not a text"},
		{"text into an integer", `SELECT 'x' AS n`, func() []any { return []any{new(int64)} }, `"x" is not an integer`},
		{"overflow", `SELECT 300 AS n`, func() []any { return []any{new(int8)} }, "300 overflows int8"},
		{"negative into unsigned", `SELECT -1 AS n`, func() []any { return []any{new(uint32)} }, "-1 overflows uint32"},
		{"not a boolean", `SELECT 2 AS b`, func() []any { return []any{new(bool)} }, "2 is not a boolean"},
		{"a struct", `SELECT 1 AS n`, func() []any { return []any{new(struct{ N int })} }, "cannot store a int64 in a *struct { N int }"},
		{"not a pointer", `SELECT 1 AS n`, func() []any { return []any{int64(0)} }, "cannot store a int64 in a int64"},
		{"NULL into a list", `SELECT NULL AS l`, func() []any { return []any{new([]int)} }, "NULL does not fit a *[]int"},
		{"too few destinations", `SELECT 1, 2`, func() []any { return []any{new(int64)} }, "scan: 1 destinations for 2 columns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := db.View(t.Context(), func(tx hub.Tx) error {
				return tx.(*Tx).queryRow(c.q).Scan(c.dest()...)
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("scan: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestDriverRowErrors checks what the shared statements rely on: a query
// of one row that finds none says so as database/sql does (IsNoRows), a
// broken unique constraint in a statement that returns rows is a conflict,
// and a bad argument is an error naming it.
func TestDriverRowErrors(t *testing.T) {
	db := newDB(t)
	createAgent(t, db, "taken")
	mustView(t, db, func(tx hub.Tx) error {
		var id int64
		err := tx.(*Tx).queryRow(`SELECT id FROM agents WHERE name = ?`, "nobody").Scan(&id)
		if !(taskDB{}).IsNoRows(err) || !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("no row: %v, want sql.ErrNoRows", err)
		}
		rows, err := tx.(*Tx).query(`SELECT id FROM agents`)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := rows.Scan(&id); err == nil {
			t.Error("Scan before Next succeeded")
		}
		return nil
	})
	err := db.Update(t.Context(), func(tx hub.Tx) error {
		var id int64
		return tx.(*Tx).queryRow(`INSERT INTO agents (name, created_at) VALUES (?, 0) RETURNING id`, "taken").Scan(&id)
	})
	if hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("insert of a taken name: %v, want ECONFLICT", err)
	}
	err = db.Update(t.Context(), func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`UPDATE agents SET name = ? WHERE name = 'taken'`, struct{}{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "argument 1") {
		t.Errorf("exec with a struct argument: %v, want an error naming argument 1", err)
	}
}

// TestViewDropsConnectionOnPanic checks that a read whose function panics
// leaves no connection in the pool with its transaction open: the next
// reads on every pooled connection see a later write.
func TestViewDropsConnectionOnPanic(t *testing.T) {
	db := newDB(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("View did not pass the panic on")
			}
		}()
		db.View(t.Context(), func(tx hub.Tx) error {
			if _, err := tx.AgentByName("nobody"); err == nil {
				t.Fatal("found an agent in an empty store")
			}
			panic("read failed")
		})
	}()
	createAgent(t, db, "later")
	for range 2 * db.r.Stats().MaxOpenConnections {
		mustView(t, db, func(tx hub.Tx) error {
			_, err := tx.AgentByName("later")
			return err
		})
	}
}
