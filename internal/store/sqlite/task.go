package sqlite

import (
	"database/sql"
	"errors"

	"github.com/agenthub/hub/internal/store/row"
	"github.com/agenthub/hub/internal/store/storesql"
	"github.com/agenthub/hub/internal/store/tasksql"
	"github.com/agenthub/hub/internal/store/usagesql"
)

// This file implements hub.TaskTx and hub.UsageTx with the statements of tasksql and usagesql (Tx embeds them).

// taskDB is the transaction as tasksql.DB.
type taskDB struct{ t *Tx }

func (d taskDB) Exec(q string, args ...any) (int64, error) {
	res, err := d.t.exec(q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d taskDB) Query(q string, args ...any) (tasksql.Rows, func(), error) {
	rows, err := d.t.query(q, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

func (d taskDB) QueryRow(q string, args ...any) row.Scanner {
	return d.t.queryRow(q, args...)
}

func (taskDB) IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// newTx returns t with its shared and its task statements set.
func newTx(t *Tx) *Tx {
	t.Statements = storesql.Statements{DB: taskDB{t}, Dialect: dialect}
	t.Tx = tasksql.Tx{DB: taskDB{t}, Recorder: &t.Statements}
	t.Usage = usagesql.Usage{DB: taskDB{t}}
	return t
}

func (d taskDB) ExecRows(b storesql.Batch, rows []any, scan func(row.Scanner) error) error {
	if scan != nil {
		return d.t.queryRows(b.What, b.Head+"VALUES ", b.Tail, len(b.Types), rows, func(r *driverRows) error { return scan(r) })
	}
	return d.t.execRowsShared(b.What, b.Head+"VALUES ", b.Tail, len(b.Types), b.Same, rows, nil)
}
