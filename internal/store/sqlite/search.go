package sqlite

import (
	"strings"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/row"
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
// index's readers column, so the index itself keeps only the messages
// delivered to it; its deliveries are still looked at, for those matches
// only, as the rule (the token is how the match gets there fast). The
// match drives (CROSS JOIN: the other way round, SQLite would run the
// full-text query again for every delivery of the reader), newest first;
// it stops after hub.MaxRanked messages that pass the filters.
func (t *Tx) SearchMessages(q hub.SearchQuery) ([]hub.SearchHit, error) {
	match := ftsQuery(q.Terms)
	if q.ReaderID > 0 {
		match += ` readers:` + readerToken(q.ReaderID)
	}
	sqlq := `SELECT m.id AS id, hub_bm25(matchinfo(messages_fts, 'pcnalx')) AS score FROM messages_fts`
	args := []any{}
	if q.ReaderID > 0 {
		sqlq += ` CROSS JOIN deliveries d ON d.agent_id = ? AND d.message_id = messages_fts.docid`
		args = append(args, q.ReaderID)
	}
	sqlq += ` CROSS JOIN messages m ON m.id = messages_fts.docid`
	sqlq += ` WHERE messages_fts MATCH ?`
	args = append(args, match)
	if q.Sender != "" {
		sqlq += ` AND m.sender = ?`
		args = append(args, q.Sender)
	}
	if q.Channel != "" {
		sqlq += ` AND m.channel = ?`
		args = append(args, q.Channel)
	}
	if q.Thread > 0 {
		sqlq += ` AND (m.id = ? OR m.reply_to = ?)`
		args = append(args, q.Thread, q.Thread)
	}
	if !q.Since.IsZero() {
		sqlq += ` AND m.created_at >= ?`
		args = append(args, row.Nanos(q.Since))
	}
	if !q.Until.IsZero() {
		sqlq += ` AND m.created_at < ?`
		args = append(args, row.Nanos(q.Until))
	}
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
	rows, err := t.query(`SELECT `+messageColumns+` FROM messages m WHERE m.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMessage(rows)
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
