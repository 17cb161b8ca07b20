package sqlite

import (
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/storesql"
)

// ftsQuery writes terms as an FTS4 query: each term a quoted phrase, all
// required. A term holds only letters and digits (hub.ParseSearchTerms),
// so no user text is read as FTS syntax.
func ftsQuery(terms [][]string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.Join(t, " ") + `"`
	}
	return strings.Join(parts, " ")
}

// SearchMessages implements hub.SearchTx in two steps: the page of
// matching IDs by rank, then the messages and snippets of that page only
// (snippet.go). An agent's query also asks for its reader token in the
// index's readers column, which holds exactly the message's deliveries
// (0014_search_readers.sql), so the index itself intersects the words'
// documents with the agent's: no delivery is looked up. The matches come
// newest first; it stops after hub.MaxRanked that pass the filters.
func (t *Tx) SearchMessages(q hub.SearchQuery) ([]hub.SearchHit, error) {
	match := ftsQuery(q.Terms)
	if q.ReaderID > 0 {
		match += ` readers:` + readerToken(q.ReaderID)
	}
	// The messages are read only when a filter asks for their columns.
	filters, fargs := storesql.SearchFilter(q)
	// The number of documents, for the ranking's idf: the span of the
	// message IDs (AUTOINCREMENT; retention deletes the oldest).
	sqlq := `SELECT messages_fts.docid AS id, hub_bm25(matchinfo(messages_fts, 'pcx'), (SELECT MAX(id) FROM messages) - (SELECT MIN(id) FROM messages) + 1) AS score FROM messages_fts`
	if filters != "" {
		sqlq += ` CROSS JOIN messages m ON m.id = messages_fts.docid`
	}
	sqlq += ` WHERE messages_fts MATCH ?` + filters
	args := append([]any{match}, fargs...)
	sqlq = `SELECT id, score FROM (` + sqlq + ` ORDER BY messages_fts.docid DESC LIMIT ?)
		ORDER BY score DESC, id DESC LIMIT ? OFFSET ?`
	args = append(args, hub.MaxRanked, q.Limit, q.Offset)
	rows, err := t.query(sqlq, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []hub.SearchHit
	byID := map[int64]int{}
	for rows.Next() {
		var id int64
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			return nil, err
		}
		byID[id] = len(hits)
		hits = append(hits, hub.SearchHit{Score: score})
	}
	if err := rows.Err(); err != nil || len(hits) == 0 {
		return nil, mapErr(err)
	}
	return hits, t.fillHits(q.Terms, hits, byID)
}

// fillHits reads the messages of a page of hits and makes their snippets.
func (t *Tx) fillHits(terms [][]string, hits []hub.SearchHit, byID map[int64]int) error {
	ids := make([]any, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	rows, err := t.query(`SELECT `+storesql.MessageColumns+` FROM messages m WHERE m.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := dialect.ScanMessage(rows)
		if err != nil {
			return err
		}
		hits[byID[m.ID]].Message = m
	}
	if err := rows.Err(); err != nil {
		return mapErr(err)
	}
	stems, err := t.queryStems(terms)
	if err != nil {
		return err
	}
	for i := range hits {
		if hits[i].Snippet, err = t.snippet(hits[i].Message.Body, stems); err != nil {
			return err
		}
	}
	return nil
}
