package postgres

import (
	"errors"
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
// PostgreSQL's numbered ones.
type taskDB struct{ t *Tx }

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
	tag, err := d.t.exec(dollars(q), args...)
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

func (d taskDB) QueryRow(q string, args ...any) row.Scanner { return d.t.queryRow(dollars(q), args...) }

func (taskDB) IsNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// newTx returns t with its task statements set; a task left ready
// NOTIFYs every replica's listener with its project, so that their parked
// next_task calls look again (Reports.TasksReady).
func newTx(t *Tx) *Tx {
	t.Statements = storesql.Statements{DB: taskDB{t}, Dialect: dialect, Changed: t.agentChanged}
	t.Tx = tasksql.Tx{DB: taskDB{t}, Ready: func(project string) error {
		_, err := t.exec(`SELECT pg_notify($1, $2)`, t.db.tasks, project)
		return err
	}}
	t.Usage = usagesql.Usage{DB: taskDB{t}}
	return t
}
