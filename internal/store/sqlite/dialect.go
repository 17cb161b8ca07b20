package sqlite

import (
	"encoding/json"
	"strings"

	"github.com/agenthub/hub/internal/store/storesql"
)

// dialect is what SQLite writes its own way in storesql's statements.
var dialect = storesql.Dialect{
	InIDs:    func(column string) string { return column + ` IN (SELECT value FROM json_each(?))` },
	IDs:      func(ids []int64) any { return idList(ids) },
	IDRows:   `SELECT value FROM json_each(?)`,
	True:     "1",
	False:    "0",
	Greatest: "MAX",
	Kinds:    func(xs []string) any { return strings.Join(xs, ",") },
	List: func(xs []string) any {
		s, _ := jsonList(xs) // a list of strings always marshals
		return s
	},
	ListDest:  func(xs *[]string) any { return jsonListDest{xs} },
	KindsDest: func(xs *[]string) any { return commaListDest{xs} },
}

// commaListDest scans a text of names separated by commas into a list.
type commaListDest struct{ xs *[]string }

// Scan implements sql.Scanner.
func (d commaListDest) Scan(src any) error {
	s := text(src)
	*d.xs = nil
	if s != "" {
		*d.xs = strings.Split(s, ",")
	}
	return nil
}

// jsonListDest scans a JSON array of texts into a list.
type jsonListDest struct{ xs *[]string }

// Scan implements sql.Scanner.
func (d jsonListDest) Scan(src any) error {
	var err error
	*d.xs, err = parseJSONList(text(src))
	return err
}

// text returns a text column's value as the driver gives it to Scan.
func text(src any) string {
	switch v := src.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// jsonList returns xs as a JSON array.
func jsonList(xs []string) (string, error) {
	if len(xs) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(xs)
	return string(b), err
}

// parseJSONList returns the texts of a JSON array.
func parseJSONList(s string) ([]string, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	var xs []string
	err := json.Unmarshal([]byte(s), &xs)
	return xs, err
}
