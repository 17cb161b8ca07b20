package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkSearch measures search queries over a corpus of chat-like
// messages (HUB_SEARCH_MESSAGES, default 1,000,000; 100 agents; 70 % direct
// messages, 30 % to one of 5 channels of 10 members each; 8-40 words drawn
// from a Zipf distribution over 20,000 words). It reports the p50 and p99
// latency of each kind of query, as an admin (every message) and as one
// agent (its deliveries). The corpus is built with bulk INSERTs through the
// index's triggers; HUB_SEARCH_CORPUS names a file to keep it in between
// runs (built if missing):
//
//	HUB_SEARCH_CORPUS=/tmp/search-1m.db go test ./internal/store/sqlite -run '^$' -bench Search -benchtime 100x -timeout 60m
func BenchmarkSearch(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("HUB_SEARCH_MESSAGES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("HUB_SEARCH_MESSAGES: %v", err)
		}
	}
	path := os.Getenv("HUB_SEARCH_CORPUS")
	if path == "" {
		path = b.TempDir() + "/hub.db"
	}
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		if err := seedSearchCorpus(path, n); err != nil {
			b.Fatal(err)
		}
		b.Logf("built a corpus of %d messages in %s", n, time.Since(start).Round(time.Second))
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for _, tt := range searchBenchQueries {
		for _, reader := range []int64{0, 7} {
			name := tt.kind + "/admin"
			if reader > 0 {
				name = tt.kind + "/agent"
			}
			b.Run(name, func(b *testing.B) { benchSearch(b, db, tt.query, reader) })
		}
	}
}

// searchBenchQueries are the kinds of query measured.
var searchBenchQueries = []struct{ kind, query string }{
	{"rare-word", "merge"},
	{"common-word", "deploy"},
	{"two-words", "review flaky"},
	{"phrase", `"disk full"`},
	{"frequent-word", "test"},
}

func benchSearch(b *testing.B, db *DB, query string, reader int64) {
	terms, err := hub.ParseSearchTerms(query)
	if err != nil {
		b.Fatal(err)
	}
	q := hub.SearchQuery{Terms: terms, ReaderID: reader, Limit: 21}
	ctx := context.Background()
	var took []time.Duration
	found := 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		start := time.Now()
		err := db.View(ctx, func(tx hub.Tx) error {
			hits, err := tx.SearchMessages(q)
			found = len(hits)
			return err
		})
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	if found == 0 {
		b.Fatalf("search %q found nothing", query)
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms/op")
	slices.Sort(took)
	at := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	var matches int
	err = db.View(ctx, func(tx hub.Tx) error {
		return tx.(*Tx).queryRow(`SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?`, ftsQuery(terms)).Scan(&matches)
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(matches), "matches")
}

// cpuTime is the CPU time the process has used (user and system): on a
// shared machine the wall time of a query is noisy, its CPU time less so.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// searchWords are the corpus's most frequent words, most frequent first;
// less frequent ones are made of syllables.
var searchWords = strings.Fields(`the to a i and is it of in for on this that we with be
	can test you not have will are fix build now so at from but do done run if ok
	deploy all one it's check need pr should merge main branch see
	just what there up new after looks review please error service failing
	tests job lint go file code change update issue data node ci green
	still about like think again before my let me get make sure ready
	flaky timeout log logs release config api client server db query slow
	memory disk cpu cache retry pipeline staging prod rollback patch hotfix`)

var syllables = strings.Fields("ka lo mer tin sa ve ron dal pi qu es tor ban zel fi nu go ra te shi")

// searchVocabulary returns n words: searchWords, then made-up ones.
func searchVocabulary(n int) []string {
	words := slices.Clone(searchWords)
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for len(words) < n {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// seedSearchCorpus creates a migrated store at path holding 100 agents and
// n messages (see BenchmarkSearch), inserted in one transaction.
func seedSearchCorpus(path string, n int) error {
	ctx := context.Background()
	const agents, channels, members = 100, 5, 10
	if err := SeedAgents(ctx, path, agents, t0, t0, nil); err != nil {
		return err
	}
	return bulkWrite(ctx, path, func(tx *sql.Tx) error { return seedMessages(ctx, tx, n, agents, channels, members) })
}

// seedMessages inserts n messages among agents (see BenchmarkSearch).
func seedMessages(ctx context.Context, tx *sql.Tx, n, agents, channels, members int) error {
	words := searchVocabulary(20_000)
	r := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(5, 6)), 1.07, 1, uint64(len(words)-1))
	insert, err := tx.PrepareContext(ctx, `INSERT INTO messages (id, sender, recipients, channel, body, kind, created_at) VALUES (?, ?, ?, ?, ?, 'message', ?)`)
	if err != nil {
		return err
	}
	deliver, err := tx.PrepareContext(ctx, `INSERT INTO deliveries (agent_id, message_id) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	span := int64(30 * 24 * time.Hour)
	var body strings.Builder
	for id := 1; id <= n; id++ {
		body.Reset()
		for i := range 8 + r.IntN(33) {
			if i > 0 {
				body.WriteByte(' ')
			}
			body.WriteString(words[zipf.Uint64()])
		}
		if r.IntN(200) == 0 {
			body.WriteString(" disk full on node " + strconv.Itoa(r.IntN(9)))
		}
		sender := 1 + r.IntN(agents)
		created := t0.UnixNano() + span*int64(id)/int64(n)
		var to []int
		channel, recipients := "", ""
		if r.IntN(10) < 3 {
			c := r.IntN(channels)
			channel = fmt.Sprintf("#room-%d", c)
			for m := range members {
				to = append(to, 1+(c*members+m)%agents)
			}
		} else {
			to = []int{1 + r.IntN(agents)}
			recipients = fmt.Sprintf("agent-%06d", to[0])
		}
		if _, err := insert.ExecContext(ctx, id, fmt.Sprintf("agent-%06d", sender), recipients, channel, body.String(), created); err != nil {
			return err
		}
		for _, a := range to {
			if _, err := deliver.ExecContext(ctx, a, id); err != nil {
				return err
			}
		}
	}
	// The store indexes each message once its deliveries are in; here, all
	// at once, from the same view.
	_, err = tx.ExecContext(ctx, `INSERT INTO messages_fts (docid, body, readers) SELECT rowid, body, readers FROM messages_fts_source`)
	return err
}

// BenchmarkPostIndexCost measures what the full-text index adds to a post:
// the same posts (8-40 words as in BenchmarkSearch's corpus, to one agent
// or to a channel of 32) into a store with the index and into one whose
// index is a view that drops what is written to it, reporting the process
// CPU per post:
//
//	go test ./internal/store/sqlite -run '^$' -bench PostIndexCost -benchtime 20000x -count 3
func BenchmarkPostIndexCost(b *testing.B) {
	words := searchVocabulary(20_000)
	for _, readers := range []int{1, 32} {
		for _, indexed := range []bool{false, true} {
			name := fmt.Sprintf("readers-%d/no-index", readers)
			if indexed {
				name = fmt.Sprintf("readers-%d/index", readers)
			}
			b.Run(name, func(b *testing.B) { benchPostIndexCost(b, words, readers, indexed) })
		}
	}
}

func benchPostIndexCost(b *testing.B, words []string, readers int, indexed bool) {
	db := newDB(b)
	var ds []hub.Delivery
	for i := range readers {
		ds = append(ds, hub.Delivery{AgentID: createAgent(b, db, fmt.Sprintf("reader-%d", i)).ID})
	}
	if !indexed {
		mustUpdate(b, db, func(tx hub.Tx) error {
			_, err := tx.(*Tx).exec(`DROP TRIGGER messages_fts_delete; DROP TRIGGER messages_fts_update_before; DROP TRIGGER messages_fts_update_after;
				DROP TABLE messages_fts;
				CREATE VIEW messages_fts AS SELECT 0 AS docid, '' AS body, '' AS readers WHERE 0;
				CREATE TRIGGER messages_fts_drop INSTEAD OF INSERT ON messages_fts BEGIN SELECT 0; END`)
			return err
		})
	}
	r := rand.New(rand.NewPCG(7, 8))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(9, 10)), 1.07, 1, uint64(len(words)-1))
	bodies := make([]string, 1000)
	for i := range bodies {
		var sb strings.Builder
		for j := range 8 + r.IntN(33) {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[zipf.Uint64()])
		}
		bodies[i] = sb.String()
	}
	ctx := context.Background()
	cpu0, i := cpuTime(b), 0
	for b.Loop() {
		m := &hub.Message{From: "x", To: []string{"reader-0"}, Body: bodies[i%len(bodies)], Kind: hub.KindMessage, CreatedAt: t0}
		if readers > 1 {
			m.To, m.Channel = nil, "#room"
		}
		i++
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(i), "cpu-µs/post")
}
