package sqlite

import (
	"database/sql/driver"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
)

// Helpers of the set-based reads and writes of the batched health sweep
// and nudge checks. A list of IDs to read is bound as one JSON array and
// expanded by json_each, so the query has a constant text and stays in the
// statement cache whatever the batch size. Rows to write go in multi-row
// VALUES statements (execRows): binding each value costs far less than
// extracting it from JSON (about 1 µs per ->> field, measured), and one
// statement per 100 rows far less than one per row.

// idList returns ids as a JSON array.
func idList(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// dueRowsCap bounds the capacity a due read allocates up front for its
// rows (its limit, the batch size, when smaller).
const dueRowsCap = 1024

// valuesChunk is how many rows one statement of execRows writes at most.
// It divides the orchestrator's default batch (hub.ScheduleSettings
// BatchLimit, 500), so that a full batch is written in statements of the
// cache only: a partial one is prepared for its call, and preparing the
// rest of each batch (64 rows a statement left 52) was ~2 % of a tick.
const valuesChunk = 100

// valuesText returns head + "(?, …), (?, …) …" + tail with n rows of cols
// placeholders; the columns in shared (a bit per column) are bound once
// for all rows, as the first parameters (see execRowsShared).
func valuesText(head, tail string, cols, n int, shared uint64) string {
	if n != valuesChunk {
		return buildValuesText(head, tail, cols, n, shared)
	}
	key := valuesKey{head, tail, cols, shared}
	if q, ok := fullValuesTexts.Load(key); ok {
		return q.(string)
	}
	q := buildValuesText(head, tail, cols, n, shared)
	fullValuesTexts.Store(key, q)
	return q
}

// valuesKey names the text of a full statement of execRows or queryRows.
type valuesKey struct {
	head, tail string
	cols       int
	shared     uint64
}

// fullValuesTexts holds the text of each full statement (valuesChunk
// rows) made so far: a few per kind of row, built once rather than at
// every statement (one text is kilobytes).
var fullValuesTexts sync.Map // valuesKey → string

// buildValuesText is valuesText without the texts kept.
func buildValuesText(head, tail string, cols, n int, shared uint64) string {
	if shared == 0 {
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
		return head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + tail
	}
	var b strings.Builder
	b.WriteString(head)
	k := bits.OnesCount64(shared)
	next := k + 1 // the number of the next row's first own parameter
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('?')
			if shared&(1<<c) != 0 {
				b.WriteString(strconv.Itoa(bits.OnesCount64(shared&(1<<c-1)) + 1))
			} else {
				b.WriteString(strconv.Itoa(next))
				next++
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(tail)
	return b.String()
}

// sharedArgs returns the arguments of rows (cols values each) for a
// statement of valuesText, and the columns bound once in it: shared when
// each of its columns has the same value in every row, else none (so that
// a call site has two texts at most, whatever its rows). The values of
// shared columns must be comparable (not []byte).
func (t *Tx) sharedArgs(rows []any, cols int, shared uint64) ([]any, uint64) {
	if shared == 0 {
		return rows, 0
	}
	for c := range cols {
		if shared&(1<<c) == 0 {
			continue
		}
		for i := c + cols; i < len(rows); i += cols {
			if rows[i] != rows[c] {
				return rows, 0
			}
		}
	}
	args := t.args[:0]
	for c := range cols {
		if shared&(1<<c) != 0 {
			args = append(args, rows[c])
		}
	}
	for i, v := range rows {
		if shared&(1<<(i%cols)) == 0 {
			args = append(args, v)
		}
	}
	t.args = args
	return args, shared
}

// execRows writes rows of cols values each (args, row after row) with
// statements head + "(?, …), (?, …) …" + tail of up to valuesChunk rows:
// the full ones and those of one row through the statement cache (two
// texts per kind), any other partial one prepared for this call only, so
// that the cache does not fill with one text per row count. done, if not nil, is called after each
// statement with the index of its first row and its row count.
func (t *Tx) execRows(what, head, tail string, cols int, args []any, done func(first, n int, res driver.Result) error) error {
	return t.execRowsShared(what, head, tail, cols, 0, args, done)
}

// execRowsShared is execRows where the columns in shared (a bit per
// column; values comparable), when equal in every row of a statement,
// are bound once for all its rows (numbered parameters) rather than in
// each: a batch of nudges has one sender, kind and time, and binding
// fewer values saves their conversion and copy in bind and in the
// driver.
func (t *Tx) execRowsShared(what, head, tail string, cols int, shared uint64, args []any, done func(first, n int, res driver.Result) error) error {
	rows := len(args) / cols
	defer func() { clear(t.args) }() // the values are not kept past the call
	for first := 0; first < rows; first += valuesChunk {
		n := min(valuesChunk, rows-first)
		chunk, same := t.sharedArgs(args[first*cols:(first+n)*cols], cols, shared)
		var res driver.Result
		var err error
		if q := valuesText(head, tail, cols, n, same); n == valuesChunk || n == 1 {
			res, err = t.exec(q, chunk...)
		} else {
			res, err = t.execOnce(q, chunk...)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done != nil {
			if err := done(first, n, res); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	return nil
}

// execOnce runs q as a statement prepared for this call only (outside the
// connection's statement cache).
func (t *Tx) execOnce(q string, args ...any) (driver.Result, error) {
	values, err := t.bind(args)
	if err != nil {
		return nil, err
	}
	st, err := t.raw.Prepare(q)
	if err != nil {
		return nil, mapErr(err)
	}
	defer st.Close()
	res, err := st.(driver.StmtExecContext).ExecContext(t.ctx, values)
	return res, mapErr(err)
}

// queryRows is execRows for statements that return rows (RETURNING): scan
// is called for each row returned.
func (t *Tx) queryRows(what, head, tail string, cols int, args []any, scan func(*driverRows) error) error {
	rows := len(args) / cols
	for first := 0; first < rows; first += valuesChunk {
		n := min(valuesChunk, rows-first)
		q, chunk := valuesText(head, tail, cols, n, 0), args[first*cols:(first+n)*cols]
		var err error
		if n == valuesChunk || n == 1 {
			err = scanRows(t.query(q, chunk...))(scan)
		} else {
			err = t.queryOnce(q, chunk, scan)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, mapErr(err))
		}
	}
	return nil
}

// queryOnce runs q as a statement prepared for this call only and calls
// scan for each row.
func (t *Tx) queryOnce(q string, args []any, scan func(*driverRows) error) error {
	values, err := t.bind(args)
	if err != nil {
		return err
	}
	st, err := t.raw.Prepare(q)
	if err != nil {
		return err
	}
	defer st.Close()
	dr, err := st.(driver.StmtQueryContext).QueryContext(t.ctx, values)
	if err != nil {
		return err
	}
	return scanRows(newRows(dr), nil)(scan)
}

// scanRows returns a function that calls scan for each of r's rows and
// closes them (or returns err).
func scanRows(r *driverRows, err error) func(scan func(*driverRows) error) error {
	return func(scan func(*driverRows) error) error {
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			if err := scan(r); err != nil {
				return err
			}
		}
		return r.Err()
	}
}
