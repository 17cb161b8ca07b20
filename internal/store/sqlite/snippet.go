package sqlite

import (
	"strings"

	"github.com/agenthub/hub/internal/hub"
)

// Snippet sizes: the words a snippet shows, and how much of a body is
// read to find them (a body may be up to 1 MiB).
const (
	snippetWords = 24
	snippetScan  = 32 << 10
)

// token is one word of a text as the index reads it: its stem and where
// it is in the text (bytes).
type token struct {
	stem       string
	start, end int
}

// tokens splits text as the full-text index does (0010_search.sql).
func (t *Tx) tokens(text string) ([]token, error) {
	rows, err := t.query(`SELECT token, start, "end" FROM messages_tokens WHERE input = ?`, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []token
	for rows.Next() {
		var tk token
		if err := rows.Scan(&tk.stem, &tk.start, &tk.end); err != nil {
			return nil, err
		}
		out = append(out, tk)
	}
	return out, mapErr(rows.Err())
}

// queryStems returns the stems of the query's words.
func (t *Tx) queryStems(terms [][]string) (map[string]bool, error) {
	var words []string
	for _, term := range terms {
		words = append(words, term...)
	}
	toks, err := t.tokens(strings.Join(words, " "))
	if err != nil {
		return nil, err
	}
	stems := map[string]bool{}
	for _, tk := range toks {
		stems[tk.stem] = true
	}
	return stems, nil
}

// snippet returns the snippetWords words of body (its first snippetScan
// bytes) holding the most words whose stem is in stems, those between
// hub.SnippetMark, with "…" where body goes on.
func (t *Tx) snippet(body string, stems map[string]bool) (string, error) {
	scan := body
	if len(scan) > snippetScan {
		scan = scan[:snippetScan]
	}
	toks, err := t.tokens(scan)
	if err != nil || len(toks) == 0 {
		return "", err
	}
	from, best := 0, -1
	for i := range toks {
		if !stems[toks[i].stem] {
			continue
		}
		n := 0
		for j := i; j < min(i+snippetWords, len(toks)); j++ {
			if stems[toks[j].stem] {
				n++
			}
		}
		if n > best {
			from, best = i, n
		}
	}
	from = max(0, min(from-snippetWords/4, len(toks)-snippetWords)) // some words before the first match
	to := min(from+snippetWords, len(toks))
	var sb strings.Builder
	if from > 0 {
		sb.WriteString("…")
	}
	at := toks[from].start
	for _, tk := range toks[from:to] {
		sb.WriteString(scan[at:tk.start])
		if stems[tk.stem] {
			sb.WriteString(hub.SnippetMark + scan[tk.start:tk.end] + hub.SnippetMark)
		} else {
			sb.WriteString(scan[tk.start:tk.end])
		}
		at = tk.end
	}
	if to < len(toks) || len(scan) < len(body) {
		sb.WriteString("…")
	} else {
		sb.WriteString(scan[at:])
	}
	return sb.String(), nil
}
