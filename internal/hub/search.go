package hub

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The search query language, the same on both stores:
//
//   - words separated by spaces; a message matches when it holds every one
//     (AND), in any order;
//   - "a quoted phrase" matches those words next to each other, in order;
//   - matching ignores case (SQLite: of ASCII letters only) and stems
//     English words ("deploys", "deployed" and "deploying" all match
//     "deploy");
//   - every character that is not a letter or a digit separates words, as
//     in the index ("api-v2" is the phrase "api v2"); there are no
//     operators: OR, NOT, '-', '*' and parentheses are ordinary text.
//
// What the stores do differently is said in docs/messages.md ("Searching
// messages"): SQLite indexes every word, PostgreSQL's english
// configuration drops stop words such as "the" and "of".

// Searchable reports whether search finds messages of kind: every kind but
// the hub's own notices, nudges (the orchestrator's, the acknowledgement
// reminders and an admin's manual ones alike) and heartbeat pulses. They
// are written from templates, one per agent and episode, and indexing
// them was the largest single cost of a tick that nudges many agents;
// search is for what agents and people wrote. Both stores hold this rule
// in their schema: SQLite's messages_fts_source view (0015) and
// PostgreSQL's search column (0013), each naming these two kinds.
func Searchable(kind string) bool { return kind != KindNudge && kind != KindHeartbeat }

// Search bounds.
const (
	maxSearchQuery = 512 // bytes of query text
	maxSearchTerms = 16  // words and phrases in a query
	// maxSearchWords bounds the words of a query, its phrases' included:
	// each word of a phrase is one more walk of the index.
	maxSearchWords  = 24
	maxSearchLimit  = 100       // hits in one reply
	maxSearchOffset = MaxRanked // how deep pages go
	// MaxRanked bounds a search's cost: the hits are the best of the
	// newest MaxRanked messages that match (and pass the filters).
	MaxRanked      = 5000
	defSearchLimit = 20
	// maxSnippet is the most bytes a hit's snippet carries.
	maxSnippet = 400
	// SnippetMark opens and closes a matched word in a snippet.
	SnippetMark = "**"
)

// SearchRequest is the input of Service.Search and Service.AdminSearch.
type SearchRequest struct {
	Query     string
	From      string // only messages from this sender
	Channel   string // only messages to this channel
	Thread    string // only this message and its replies
	Since     time.Time
	Until     time.Time
	Limit     int
	PageToken string
	// MinPriority keeps the messages of at least this priority; 0 = any.
	MinPriority Priority
	Agent       string // admin only: only messages delivered to this agent
	Project     string // admin only: only this project's messages
}

// SearchQuery is a parsed search for the store.
type SearchQuery struct {
	// Terms must all match; each is a phrase of one or more words.
	Terms    [][]string
	ReaderID int64  // only messages delivered to this agent; 0 = all
	Project  string // only this project's messages; "" = all
	Sender   string
	Channel  string
	Thread   int64 // the message Thread and those replying to it; 0 = any
	Since    time.Time
	Until    time.Time // exclusive; zero = no bound
	// MinPriority keeps the messages of at least this priority; 0 = any.
	MinPriority Priority
	Offset      int
	Limit       int
}

// SearchHit is one message a search found: Snippet is the best-matching
// fragment of its body with the matched words between SnippetMark, Score
// its relevance (higher is better, comparable within one search only).
type SearchHit struct {
	Message *Message
	Snippet string
	Score   float64
}

// ParseSearchTerms splits a query into its terms (see the query
// language above). Errors: EINVALID.
func ParseSearchTerms(q string) ([][]string, error) {
	if len(q) > maxSearchQuery {
		return nil, Errorf(EINVALID, "query is %d bytes long: the most is %d", len(q), maxSearchQuery)
	}
	if !utf8.ValidString(q) {
		return nil, Errorf(EINVALID, "query is not valid UTF-8 text")
	}
	if strings.Count(q, `"`)%2 != 0 {
		return nil, Errorf(EINVALID, "query %q has an unclosed '\"': a phrase is written between two double quotes, for example \"disk full\"", q)
	}
	var terms [][]string
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 { // inside quotes: one phrase
			if ws := searchWords(part); len(ws) > 0 {
				terms = append(terms, ws)
			}
			continue
		}
		for _, field := range strings.Fields(part) {
			if ws := searchWords(field); len(ws) > 0 {
				terms = append(terms, ws)
			}
		}
	}
	if len(terms) == 0 {
		return nil, Errorf(EINVALID, "query %q has no word to search for: give one or more words (letters or digits), or a \"quoted phrase\"", q)
	}
	if len(terms) > maxSearchTerms {
		return nil, Errorf(EINVALID, "query has %d words and phrases: the most is %d", len(terms), maxSearchTerms)
	}
	words := 0
	for _, t := range terms {
		words += len(t)
	}
	if words > maxSearchWords {
		return nil, Errorf(EINVALID, "query has %d words, its phrases' included: the most is %d", words, maxSearchWords)
	}
	return terms, nil
}

// searchWords splits s into words of letters and digits, their ASCII
// letters in lower case: the SQLite index folds those only, so folding
// more would make "ÉTÉ" miss itself there (PostgreSQL folds every letter
// of query and text alike).
func searchWords(s string) []string {
	lower := strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
	return strings.FieldsFunc(lower, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// parsePageToken reads a page token: "" is the first page. Errors: EINVALID.
func parsePageToken(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxSearchOffset {
		return 0, Errorf(EINVALID, "page_token %q is not one this hub gave: pass the next_page_token of the previous reply, or leave it empty for the first page", s)
	}
	return n, nil
}

// nextPageToken is the token of the page after hits found at offset, "" when none follows.
func nextPageToken(offset, n int, more bool) string {
	if !more || offset+n > maxSearchOffset {
		return ""
	}
	return strconv.Itoa(offset + n)
}

// trimSnippet bounds a snippet to maxSnippet bytes, on a character boundary.
func trimSnippet(s string) string {
	if len(s) <= maxSnippet {
		return s
	}
	cut := maxSnippet - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
