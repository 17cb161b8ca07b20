package sqlite

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// execRowsShared writes every row as given, over several statements (two
// full, one partial), whether the shared columns are equal in every row of
// a statement (bound once) or differ in one row (bound in each).
func TestExecRowsSharedWritesEveryRow(t *testing.T) {
	t.Parallel()
	db := openDB(t, tempPath(t))
	const n = 2*valuesChunk + 37
	type rowT struct {
		ID   int64
		Kind string
		Text string
		At   int64
		Blob []byte
	}
	for _, differ := range []int{-1, 0, valuesChunk + 5, n - 1} { // the row whose shared values differ; -1: none
		t.Run(fmt.Sprint("differ=", differ), func(t *testing.T) {
			var want []rowT
			var args []any
			for i := range n {
				r := rowT{ID: int64(i + 1), Kind: "nudge", Text: fmt.Sprint("text ", i), At: 1_700_000_000_000_000_000, Blob: []byte{byte(i)}}
				if i == differ {
					r.Kind, r.At = "health", r.At+1
				}
				want = append(want, r)
				args = append(args, r.ID, r.Kind, r.Text, r.At, r.Blob)
			}
			var got []rowT
			mustUpdate(t, db, func(tx hub.Tx) error {
				t := tx.(*Tx)
				if _, err := t.exec(`CREATE TEMP TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, kind TEXT, text TEXT, at INTEGER, blob BLOB)`); err != nil {
					return err
				}
				if _, err := t.exec(`DELETE FROM rows`); err != nil {
					return err
				}
				if err := t.execRowsShared("rows", `INSERT INTO rows (id, kind, text, at, blob) VALUES `, ``, 5, 1<<1|1<<3, args, nil); err != nil {
					return err
				}
				rows, err := t.query(`SELECT id, kind, text, at, blob FROM rows ORDER BY id`)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var r rowT
					if err := rows.Scan(&r.ID, &r.Kind, &r.Text, &r.At, &r.Blob); err != nil {
						return err
					}
					got = append(got, r)
				}
				return rows.Err()
			})
			if !slices.EqualFunc(got, want, func(a, b rowT) bool {
				return a.ID == b.ID && a.Kind == b.Kind && a.Text == b.Text && a.At == b.At && slices.Equal(a.Blob, b.Blob)
			}) {
				t.Fatalf("rows written = %v\nwant %v", got, want)
			}
		})
	}
}
