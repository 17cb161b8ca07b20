package sqlite

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// Helpers of the set-based reads and writes of the batched health sweep
// and nudge checks. A list of IDs to read is bound as one JSON array and
// expanded by json_each, so the query has a constant text and stays in the
// statement cache whatever the batch size. Rows to write go in multi-row
// VALUES statements (execRows): binding each value costs far less than
// extracting it from JSON (about 1 µs per ->> field, measured), and one
// statement per 64 rows far less than one per row.

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

// valuesChunk is how many rows one statement of execRows writes at most.
const valuesChunk = 64

// execRows writes rows of cols values each (args, row after row) with
// statements head + "(?, …), (?, …) …" + tail of up to valuesChunk rows:
// the full ones through the statement cache (one text per kind), the last
// partial one prepared for this call only, so that the cache does not fill
// with one text per row count. done, if not nil, is called after each
// statement with the index of its first row and its row count.
func (t *Tx) execRows(what, head, tail string, cols int, args []any, done func(first, n int, res sql.Result) error) error {
	rows := len(args) / cols
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	text := func(n int) string { return head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + tail }
	for first := 0; first < rows; first += valuesChunk {
		n := min(valuesChunk, rows-first)
		chunk := args[first*cols : (first+n)*cols]
		var res sql.Result
		var err error
		if n == valuesChunk {
			res, err = t.exec(text(n), chunk...)
		} else {
			res, err = t.execOnce(text(n), chunk...)
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
func (t *Tx) execOnce(q string, args ...any) (sql.Result, error) {
	st, err := t.tx.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	res, err := st.ExecContext(t.ctx, args...)
	return res, mapErr(err)
}
