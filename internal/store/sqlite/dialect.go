package sqlite

import (
	"database/sql"

	"github.com/agenthub/hub/internal/store/storesql"
)

// dialect is what SQLite writes its own way in storesql's statements.
var dialect = storesql.Dialect{
	InIDs:  func(column string) string { return column + ` IN (SELECT value FROM json_each(?))` },
	IDs:    func(ids []int64) any { return idList(ids) },
	IDRows: `SELECT value FROM json_each(?)`,
	True:   "1",
	List: func(xs []string) any {
		s, _ := jsonList(xs) // a list of strings always marshals
		return s
	},
	ListDest: func(xs *[]string) any { return jsonListDest{xs} },
}

// jsonListDest scans a JSON array of texts into a list.
type jsonListDest struct{ xs *[]string }

// Scan implements sql.Scanner.
func (d jsonListDest) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	}
	var err error
	*d.xs, err = parseJSONList(s)
	return err
}

// mappedRow is a row whose Scan reports a broken constraint as the domain
// does (mapErr), as exec does.
type mappedRow struct{ *sql.Row }

// Scan implements row.Scanner.
func (r mappedRow) Scan(dest ...any) error { return mapErr(r.Row.Scan(dest...)) }
