package postgres

import (
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storesql"
)

// headlineOptions bound ts_headline's fragment: about 24 words around the
// best match, matched words between hub.SnippetMark.
const headlineOptions = `StartSel=` + hub.SnippetMark + `, StopSel=` + hub.SnippetMark + `, MaxWords=24, MinWords=10, MaxFragments=1, FragmentDelimiter=" … "`

// SearchMessages implements hub.SearchTx over the messages' search column
// (0010_search.sql): each term is a phraseto_tsquery, all of them ANDed.
// The newest hub.MaxRanked matches are ranked by ts_rank; ts_headline, which parses a whole
// body, runs on that page only.
func (t *Tx) SearchMessages(q hub.SearchQuery) ([]hub.SearchHit, error) {
	args := []any{}
	arg := func(v any) string {
		args = append(args, v)
		return "?"
	}
	parts := make([]string, len(q.Terms))
	for i, term := range q.Terms {
		parts[i] = `phraseto_tsquery('english', ` + arg(strings.Join(term, " ")) + `)`
	}
	where := `m.search @@ q.q`
	if q.ReaderID > 0 {
		where += ` AND EXISTS (SELECT 1 FROM deliveries d WHERE d.agent_id = ` + arg(q.ReaderID) + ` AND d.message_id = m.id)`
	}
	filters, fargs := storesql.SearchFilter(q)
	where += filters
	args = append(args, fargs...)
	sqlq := `WITH q AS (SELECT ` + strings.Join(parts, ` && `) + ` AS q),
		newest AS (SELECT m.id, m.search FROM messages m, q WHERE ` + where + ` ORDER BY m.id DESC LIMIT ` + arg(hub.MaxRanked) + `),
		page AS (SELECT newest.id, ts_rank(newest.search, q.q) AS score FROM newest, q
			ORDER BY score DESC, newest.id DESC LIMIT ` + arg(q.Limit) + ` OFFSET ` + arg(q.Offset) + `)
		SELECT ` + storesql.MessageColumns + `, ts_headline('english', left(m.body, 65536), q.q, '` + headlineOptions + `'), page.score
		FROM page JOIN messages m ON m.id = page.id, q
		ORDER BY page.score DESC, page.id DESC`
	rows, err := t.query(dollars(sqlq), args...)
	return scanRows(rows, err, func(r pgx.Rows) (hub.SearchHit, error) {
		var h hub.SearchHit
		var score float32
		m, err := dialect.ScanMessage(r, &h.Snippet, &score)
		h.Message, h.Score = m, float64(score)
		return h, err
	})
}
