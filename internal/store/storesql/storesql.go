// Package storesql holds the statements of the store written once for
// SQLite and PostgreSQL: plain SQL with "?" placeholders, over the same
// tables of the one migration list (store/migration). Each store hands its
// transaction in as a DB, numbering the placeholders as it needs, and
// supplies in a Dialect only what the two write differently. One file per
// noun, as in the stores.
package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// Rows is the result of a query (database/sql's and pgx's rows both are,
// with Close adapted).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// DB is a store's write or read transaction.
type DB interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(q string, args ...any) (int64, error)
	// Query runs a query; close ends it.
	Query(q string, args ...any) (rows Rows, close func(), err error)
	// QueryRow runs a query of one row; its Scan returns ErrNoRows when
	// there is none.
	QueryRow(q string, args ...any) row.Scanner
	// IsNoRows reports whether err says a row was not found.
	IsNoRows(err error) bool
	// ExecRows runs b over rows (len(b.Types) values each, row after row)
	// and, if scan is not nil, calls it with each row the statement
	// returns: the rows go in as a multi-row VALUES in SQLite (statements
	// of up to 100 rows, whose binding costs less than extracting JSON),
	// as unnest of one array per column in PostgreSQL (one statement).
	ExecRows(b Batch, rows []any, scan func(row.Scanner) error) error
}

// Batch is a statement that writes many rows: Head, the rows, then Tail.
// The rows' columns are named column1, column2 … (as VALUES names them),
// and an UPDATE reads them FROM ( the rows ) AS v. Head and Tail hold no
// placeholder.
type Batch struct {
	What       string // what it writes, for its errors
	Head, Tail string
	// Types are the columns' PostgreSQL types: bigint, integer, text,
	// boolean, or text[] (its values as Kinds gives them).
	Types []string
	// Same marks the columns (a bit each) that often hold one value in
	// every row (one sender, one time): SQLite binds them once for all the
	// rows of a statement when they do.
	Same uint64
}

// Dialect is what a store's SQL writes its own way.
type Dialect struct {
	// InIDs is the condition that column is one of the IDs of one
	// argument, the list IDs makes: json_each of a JSON array in SQLite,
	// = ANY of an array in PostgreSQL.
	InIDs func(column string) string
	IDs   func(ids []int64) any
	// IDRows is a query of the IDs of one argument, the list IDs makes,
	// one row each.
	IDRows string
	// Bytewise follows an ORDER BY of text to order it by its bytes, as
	// SQLite does by default: PostgreSQL's C collation.
	Bytewise string
	// True is the literal a flag equals when set: 1 in SQLite, whose
	// partial indexes say so (a query must say it alike to use them), true
	// in PostgreSQL; False the one it equals when clear.
	True, False string
	// List is a list of texts as a column holds it (a JSON array in
	// SQLite, a TEXT[] in PostgreSQL); ListDest is where such a column
	// scans into xs.
	List     func(xs []string) any
	ListDest func(xs *[]string) any
	// Greatest is the function of the largest of its arguments: MAX in
	// SQLite, GREATEST in PostgreSQL.
	Greatest string
	// Kinds is a list of names as a column of names separated by commas
	// in SQLite, a TEXT[] in PostgreSQL, holds it (a liveness state's
	// health kinds, a message's recipients); KindsDest is where such a
	// column scans into xs.
	Kinds     func(xs []string) any
	KindsDest func(xs *[]string) any
}

// unlist returns a list column's value as the domain holds it: nil when
// empty.
func unlist(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// Statements implements, over a DB, the groups of hub.Tx whose
// statements the two stores share (one file per noun). A store's Tx
// embeds them, and declares itself only what its dialect writes
// otherwise.
type Statements struct {
	DB      DB
	Dialect Dialect
	// Changed, if set, is told of each agent whose token the transaction
	// changes and of each agent it deletes: a store with several processes
	// tells them there.
	Changed func(agentID int64, change hub.AgentChange) error
	// Changes receives what the write transaction's statements change
	// that parked callers wait for (Record); nil outside a hub's write.
	Changes *hub.Changes
}

// Record implements hub.ChangesTx.
func (s *Statements) Record(c *hub.Changes) { s.Changes = c }

// Recording implements hub.ChangesTx.
func (s *Statements) Recording() *hub.Changes { return s.Changes }

// all runs q and scans each of its rows.
func all[T any](db DB, scan func(row.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, done, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// column runs q, a query of one column, and returns its values.
func column[T any](db DB, q string, args ...any) ([]T, error) {
	return all(db, func(s row.Scanner) (T, error) {
		var v T
		err := s.Scan(&v)
		return v, err
	}, q, args...)
}
