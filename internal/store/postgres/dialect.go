package postgres

import (
	"github.com/agenthub/hub/internal/store/storesql"
)

// dialect is what PostgreSQL writes its own way in storesql's statements.
var dialect = storesql.Dialect{
	InIDs:     func(column string) string { return column + ` = ANY(?)` },
	IDs:       func(ids []int64) any { return ids },
	IDRows:    `SELECT unnest(?::bigint[])`,
	Bytewise:  ` COLLATE "C"`,
	True:      "true",
	False:     "false",
	Greatest:  "GREATEST",
	Kinds:     func(xs []string) any { return list(xs) },
	List:      func(xs []string) any { return list(xs) },
	ListDest:  func(xs *[]string) any { return xs },
	KindsDest: func(xs *[]string) any { return xs },
}
