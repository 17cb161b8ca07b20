package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"
)

// A transaction's statements run on its SQLite driver connection (Tx.raw),
// past database/sql: its locks, its conversion of every argument, its
// wrapping of rows and its conversion of every scanned value cost more
// CPU and allocations than the driver's own work for the hub's short
// statements. The driver keeps each connection's prepared statements by
// text (_stmt_cache_size) and resets one when its rows close; what
// database/sql did besides is here: the arguments made driver values
// (bind), the rows read into the scanners' destinations (assign).

// bind returns args as the driver's values, in t.values (reused: a Tx
// runs one statement at a time, and the driver has bound the values once
// the statement has begun).
func (t *Tx) bind(args []any) ([]driver.NamedValue, error) {
	if cap(t.values) < len(args) {
		t.values = make([]driver.NamedValue, 0, len(args))
	}
	t.values = t.values[:0]
	for i, a := range args {
		v, err := value(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		t.arg(v)
	}
	return t.values, nil
}

// value returns a as a driver value, as database/sql would (the driver
// checks no values of its own).
func value(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, string, []byte, bool, float64, time.Time:
		return a, nil
	case int:
		return int64(v), nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

// exec runs q, a statement that returns no rows.
func (t *Tx) exec(q string, args ...any) (driver.Result, error) {
	if _, err := t.bind(args); err != nil {
		return nil, err
	}
	return t.execValues(q)
}

// control runs a read's BEGIN or ROLLBACK as a query: the driver serves
// a query from its statement cache, while its exec of a statement without
// arguments parses the text every time.
func (t *Tx) control(q string) error {
	r, err := t.raw.QueryContext(t.ctx, q, nil)
	if err != nil {
		return mapErr(err)
	}
	return r.Close()
}

// driverRows is a query's rows on the driver's connection
// (storesql.Rows); its Close returns its statement to the connection's
// cache.
type driverRows struct {
	r      driver.Rows
	values []driver.Value // the current row's
	cols   []string
	ready  bool // Next found a row that Scan may read
	err    error
}

// query runs q and returns its rows, which the caller must close.
func (t *Tx) query(q string, args ...any) (*driverRows, error) {
	r := &driverRows{}
	return r, r.open(t, q, args)
}

// open runs q as r's statement.
func (r *driverRows) open(t *Tx, q string, args []any) error {
	values, err := t.bind(args)
	if err != nil {
		return err
	}
	dr, err := t.raw.QueryContext(t.ctx, q, values)
	if err != nil {
		return mapErr(err)
	}
	r.set(dr)
	return nil
}

// newRows returns the rows of dr, a query begun on the driver.
func newRows(dr driver.Rows) *driverRows {
	r := &driverRows{}
	r.set(dr)
	return r
}

// set makes dr r's query.
func (r *driverRows) set(dr driver.Rows) {
	r.r, r.cols = dr, dr.Columns()
	r.values = make([]driver.Value, len(r.cols))
}

// Next advances to the next row; false at the end or on an error (Err).
func (r *driverRows) Next() bool {
	r.ready = false
	if r.r == nil {
		return false
	}
	if err := r.r.Next(r.values); err != nil {
		if err != io.EOF {
			r.err = mapErr(err)
		}
		r.Close()
		return false
	}
	r.ready = true
	return true
}

// Scan copies the current row's columns into dest, one destination per
// column.
func (r *driverRows) Scan(dest ...any) error {
	if !r.ready {
		return errors.New("scan: no current row (Next was not called or found none)")
	}
	if len(dest) != len(r.values) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(r.values))
	}
	for i, d := range dest {
		if err := assign(d, r.values[i]); err != nil {
			return fmt.Errorf("scan column %d (%s): %w", i+1, r.cols[i], err)
		}
	}
	return nil
}

// Err returns the error that ended Next, if any.
func (r *driverRows) Err() error { return r.err }

// Close ends the query; closing rows again does nothing.
func (r *driverRows) Close() error {
	if r.r == nil {
		return nil
	}
	err := r.r.Close()
	r.r = nil
	clear(r.values) // the values are not kept past the query
	return err
}

// oneRow is QueryRow's row: the query's first row, or its error.
type oneRow struct {
	driverRows
	openErr error
}

// queryRow runs q, a query of one row, whose Scan reports sql.ErrNoRows
// when it returns none.
func (t *Tx) queryRow(q string, args ...any) *oneRow {
	r := &oneRow{}
	r.openErr = r.open(t, q, args)
	return r
}

// Scan implements row.Scanner: the first row into dest, then the query
// ends.
func (r *oneRow) Scan(dest ...any) error {
	if r.openErr != nil {
		return r.openErr
	}
	defer r.Close()
	if !r.Next() {
		if r.err != nil {
			return r.err
		}
		return sql.ErrNoRows
	}
	if err := r.driverRows.Scan(dest...); err != nil {
		return err
	}
	return r.Close()
}

// assign stores a column's value, as the driver reads it (int64, float64,
// string, []byte, bool or nil), in dest, one of the destinations the
// store's scans use; any other is an error.
func assign(dest any, src driver.Value) error {
	var err error
	switch d := dest.(type) {
	case *int64:
		*d, err = toInt(src)
		return err
	case *int:
		var n int64
		if n, err = toInt(src); err == nil && int64(int(n)) != n {
			err = fmt.Errorf("%d overflows int", n)
		}
		*d = int(n)
		return err
	case *string:
		*d, err = toText(src)
		return err
	case *bool:
		*d, err = toBool(src)
		return err
	case *float64:
		*d, err = toReal(src)
		return err
	case *[]byte:
		switch s := src.(type) {
		case []byte:
			*d = s // the driver's copy, made for this row
			return nil
		case string:
			*d = []byte(s)
			return nil
		case nil:
			*d = nil
			return nil
		}
		return unsupported(dest, src)
	case sql.Scanner:
		return d.Scan(src)
	}
	return assignKind(dest, src)
}

// assignKind is assign for a pointer to another integer, text, boolean or
// real type (*int32, a named type such as hub.SenderKind): by its kind.
func assignKind(dest any, src driver.Value) error {
	p := reflect.ValueOf(dest)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return unsupported(dest, src)
	}
	v := p.Elem()
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := toInt(src)
		if err != nil {
			return err
		}
		if v.OverflowInt(n) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := toInt(src)
		if err != nil {
			return err
		}
		if n < 0 || v.OverflowUint(uint64(n)) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetUint(uint64(n))
		return nil
	case reflect.String:
		s, err := toText(src)
		if err != nil {
			return err
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, err := toBool(src)
		if err != nil {
			return err
		}
		v.SetBool(b)
		return nil
	case reflect.Float32, reflect.Float64:
		f, err := toReal(src)
		if err != nil {
			return err
		}
		v.SetFloat(f)
		return nil
	}
	return unsupported(dest, src)
}

// unsupported is assign's error for a destination it does not know.
func unsupported(dest any, src driver.Value) error {
	if src == nil {
		return fmt.Errorf("NULL does not fit a %T (scan into a sql.Null type)", dest)
	}
	return fmt.Errorf("cannot store a %T in a %T: the store scans into pointers to integers, texts, []byte, booleans or reals, or a sql.Scanner", src, dest)
}

// toInt returns an integer column's value.
func toInt(src driver.Value) (int64, error) {
	switch s := src.(type) {
	case int64:
		return s, nil
	case bool:
		if s {
			return 1, nil
		}
		return 0, nil
	case string:
		return parseInt(s)
	case []byte:
		return parseInt(string(s))
	case nil:
		return 0, errors.New("NULL is not an integer (scan into a sql.Null type)")
	}
	return 0, fmt.Errorf("a %T is not an integer", src)
}

// parseInt returns the integer written in s.
func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

// toText returns a text column's value.
func toText(src driver.Value) (string, error) {
	switch s := src.(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	case int64:
		return strconv.FormatInt(s, 10), nil
	case float64:
		return strconv.FormatFloat(s, 'g', -1, 64), nil
	case nil:
		return "", errors.New("NULL is not a text (scan into a sql.Null type)")
	}
	return "", fmt.Errorf("a %T is not a text", src)
}

// toBool returns a boolean column's value: SQLite stores 0 or 1.
func toBool(src driver.Value) (bool, error) {
	switch s := src.(type) {
	case bool:
		return s, nil
	case int64:
		if s == 0 || s == 1 {
			return s == 1, nil
		}
		return false, fmt.Errorf("%d is not a boolean (0 or 1)", s)
	case nil:
		return false, errors.New("NULL is not a boolean (scan into a sql.Null type)")
	}
	return false, fmt.Errorf("a %T is not a boolean", src)
}

// toReal returns a real column's value.
func toReal(src driver.Value) (float64, error) {
	switch s := src.(type) {
	case float64:
		return s, nil
	case int64:
		return float64(s), nil
	case nil:
		return 0, errors.New("NULL is not a real (scan into a sql.Null type)")
	}
	return 0, fmt.Errorf("a %T is not a real", src)
}
