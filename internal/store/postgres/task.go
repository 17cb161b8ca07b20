package postgres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/storesql"
	"github.com/agenthub/hub/internal/store/tasksql"
	"github.com/agenthub/hub/internal/store/usagesql"
)

// This file implements hub.TaskTx and hub.UsageTx with the statements of tasksql and usagesql (Tx embeds them).

// taskDB is the transaction as tasksql.DB: its "?" placeholders become
// PostgreSQL's numbered ones. Its writes need the exclusive write lock
// unless w says they are shared-safe (a statement the shared lock covers).
type taskDB struct {
	t *Tx
	w sharedWrite
}

// dollarTexts holds the rewritten texts of the statements seen, at most
// dollarTextsMax of them: the shared statements are a bounded set of texts
// (a few vary with the length of a list), so a statement is rewritten once,
// not at every call.
var (
	dollarTexts     sync.Map // statement → its text with numbered placeholders
	dollarTextsHeld atomic.Int32
)

const dollarTextsMax = 4096

// dollars rewrites the "?" placeholders of q as $1, $2... (the shared
// statements hold no other question mark).
func dollars(q string) string {
	if d, ok := dollarTexts.Load(q); ok {
		return d.(string)
	}
	d := numberPlaceholders(q)
	if dollarTextsHeld.Add(1) <= dollarTextsMax {
		dollarTexts.Store(q, d)
	}
	return d
}

// numberPlaceholders returns q with its "?" written $1, $2...
func numberPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d taskDB) Exec(q string, args ...any) (int64, error) {
	tag, err := d.t.execAs(d.w, dollars(q), args...)
	if err != nil {
		return 0, mapErr(err)
	}
	return tag.RowsAffected(), nil
}

func (d taskDB) Query(q string, args ...any) (tasksql.Rows, func(), error) {
	rows, err := d.t.query(dollars(q), args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

func (d taskDB) QueryRow(q string, args ...any) row.Scanner {
	return d.t.queryRowAs(d.w, dollars(q), args...)
}

func (taskDB) IsNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// newTx returns t with its task statements set; a task left ready
// NOTIFYs every replica's listener with its project, so that their parked
// next_task calls look again (Reports.TasksReady).
func newTx(t *Tx) *Tx {
	t.Statements = storesql.Statements{DB: taskDB{t: t}, Dialect: dialect, Changed: t.agentChanged}
	t.Tx = tasksql.Tx{DB: taskDB{t: t}, Recorder: &t.Statements, Ready: func(project string) error {
		_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.tasks, project)
		return err
	}}
	t.Usage = usagesql.Usage{DB: taskDB{t: t}}
	return t
}

func (d taskDB) ExecRows(b storesql.Batch, rows []any, scan func(row.Scanner) error) error {
	if len(rows) == 0 {
		return nil
	}
	q, args, err := unnest(b, rows)
	if err != nil {
		return fmt.Errorf("%s: %w", b.What, err)
	}
	if scan == nil {
		_, err = d.t.exec(q, args...)
	} else {
		var rs pgx.Rows
		rs, err = d.t.query(q, args...)
		_, err = scanRows(rs, err, func(r pgx.Rows) (struct{}, error) { return struct{}{}, scan(r) })
	}
	if err != nil {
		return fmt.Errorf("%s: %w", b.What, err)
	}
	return nil
}

// unnest returns b's statement with its rows as "SELECT column1, … FROM
// unnest($1::TYPE[], …)", and its arguments: one array per column.
func unnest(b storesql.Batch, rows []any) (string, []any, error) {
	cols := len(b.Types)
	n := len(rows) / cols
	var sel, from, names strings.Builder
	args := make([]any, cols)
	for c, typ := range b.Types {
		if c > 0 {
			sel.WriteString(", ")
			from.WriteString(", ")
			names.WriteString(", ")
		}
		name := "column" + strconv.Itoa(c+1)
		sel.WriteString(name)
		names.WriteString(name)
		elem := typ
		var err error
		switch typ {
		case "bigint":
			args[c], err = columnOf(rows, c, cols, n, integer)
			if err != nil { // a column of IDs where NULL is none
				args[c], err = columnOf(rows, c, cols, n, func(v any) (*int64, bool) {
					if v == nil {
						return nil, true
					}
					i, ok := integer(v)
					return &i, ok
				})
			}
		case "integer":
			args[c], err = columnOf(rows, c, cols, n, func(v any) (int32, bool) { i, ok := integer(v); return int32(i), ok })
		case "text":
			args[c], err = columnOf(rows, c, cols, n, func(v any) (string, bool) { s, ok := v.(string); return s, ok })
		case "boolean":
			args[c], err = columnOf(rows, c, cols, n, func(v any) (bool, bool) { b, ok := v.(bool); return b, ok })
		case "text[]":
			// unnest flattens an array of arrays: each list goes in as the
			// text of an array.
			elem = "text"
			args[c], err = columnOf(rows, c, cols, n, func(v any) (string, bool) { xs, ok := v.([]string); return arrayLiteral(xs), ok })
			sel.WriteString("::text[]")
		default:
			err = fmt.Errorf("no array of %s", typ)
		}
		if err != nil {
			return "", nil, err
		}
		from.WriteString("$" + strconv.Itoa(c+1) + "::" + elem + "[]")
	}
	return b.Head + "SELECT " + sel.String() + " FROM unnest(" + from.String() + ") AS v(" + names.String() + ")" + b.Tail, args, nil
}

// integer returns v, a Go integer, as an int64.
func integer(v any) (int64, bool) {
	switch i := v.(type) {
	case int64:
		return i, true
	case int:
		return int64(i), true
	case int32:
		return int64(i), true
	}
	return 0, false
}

// columnOf returns column c of rows (cols values each, n rows) as a slice
// of T, each value converted by as.
func columnOf[T any](rows []any, c, cols, n int, as func(any) (T, bool)) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		v, ok := as(rows[i*cols+c])
		if !ok {
			return nil, fmt.Errorf("column %d holds %T", c+1, rows[i*cols+c])
		}
		out[i] = v
	}
	return out, nil
}
