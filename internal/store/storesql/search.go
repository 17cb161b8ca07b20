package storesql

import (
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
)

// SearchFilter returns the conditions of a search's filters on messages m
// (all but its words and its reader, which each store matches its own
// way: FTS4 in SQLite, tsvector in PostgreSQL), each following " AND ",
// and their arguments in order; "" when there is none, so that a search
// without filters reads no message row.
func SearchFilter(q hub.SearchQuery) (where string, args []any) {
	filter := func(cond string, vs ...any) {
		where += ` AND ` + cond
		args = append(args, vs...)
	}
	if q.Sender != "" {
		filter(`m.sender = ?`, q.Sender)
	}
	if q.Channel != "" {
		filter(`m.channel = ?`, q.Channel)
	}
	if q.Project != "" {
		filter(`m.project = ?`, q.Project)
	}
	if q.Thread > 0 {
		filter(`(m.id = ? OR m.reply_to = ?)`, q.Thread, q.Thread)
	}
	if q.MinPriority > 0 {
		filter(`m.priority >= ?`, int(q.MinPriority))
	}
	if !q.Since.IsZero() {
		filter(`m.created_at >= ?`, row.Nanos(q.Since))
	}
	if !q.Until.IsZero() {
		filter(`m.created_at < ?`, row.Nanos(q.Until))
	}
	return where, args
}
