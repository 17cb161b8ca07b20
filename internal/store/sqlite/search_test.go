package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// A batch of posts is indexed once, at the end of its transaction, in one
// segment of the index: the posts that committed are found (each by its
// readers only), the ones rolled back are not, and the index agrees with
// the messages and their deliveries (FTS4's integrity check reads the view
// it indexes back), also after pruning.
func TestSearchIndexesGroupCommit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	release, blocked := blockWriter(t, db)
	const n = 60
	fails := func(i int) bool { return i%7 == 3 }
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx hub.Tx) error {
				to := []hub.Delivery{{AgentID: ann.ID}}
				if i%2 == 1 {
					to = append(to, hub.Delivery{AgentID: bob.ID})
				}
				m := &hub.Message{From: "x", Channel: "#c", Body: fmt.Sprintf("grouped note %d", i), Kind: hub.KindMessage, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
				if err := tx.InsertMessage(m, to); err != nil {
					return err
				}
				ids[i] = m.ID
				if fails(i) {
					return errBoom
				}
				return nil
			})
		})
	}
	waitQueued(t, db, n)
	release()
	wg.Wait()
	if err := <-blocked; err != nil {
		t.Fatalf("blocking write: %v", err)
	}
	for i := range n {
		if fails(i) != (errs[i] != nil) {
			t.Fatalf("write %d: error %v", i, errs[i])
		}
	}
	// wantFor lists the committed posts from the first-th on that reader
	// (0: the admin) received.
	wantFor := func(reader int64, first int) []int64 {
		var out []int64
		for i := first; i < n; i++ {
			if !fails(i) && (reader != bob.ID || i%2 == 1) {
				out = append(out, ids[i])
			}
		}
		slices.Sort(out)
		return out
	}
	first := 0
	check := func(when string) {
		t.Helper()
		for _, reader := range []int64{0, ann.ID, bob.ID} {
			if got, want := findWord(t, db, "grouped", reader), wantFor(reader, first); !slices.Equal(got, want) {
				t.Errorf("%s: reader %d finds %v, want %v", when, reader, got, want)
			}
		}
		checkIndex(t, db)
	}
	check("posted")
	var segments int
	if err := db.View(context.Background(), func(tx hub.Tx) error {
		return tx.(*Tx).queryRow(`SELECT count(*) FROM messages_fts_segdir`).Scan(&segments)
	}); err != nil || segments != 1 {
		t.Errorf("the batch wrote %d index segments (%v), want 1", segments, err)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.DeleteMessagesBefore(t0.Add(20*time.Second), 100)
		return err
	})
	first = 20
	check("pruned")
}

// An agent's deleted deliveries leave the index with it: an agent that
// gets its ID again (SQLite gives the highest ID again once its row is
// gone) finds none of the messages of the one before, and the others
// still find theirs.
func TestSearchReadersAfterAgentDeleted(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	post := func(body string, to ...*hub.Agent) int64 {
		m := &hub.Message{From: "x", Body: body, Kind: hub.KindMessage, CreatedAt: t0}
		var ds []hub.Delivery
		for _, a := range to {
			ds = append(ds, hub.Delivery{AgentID: a.ID})
		}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
		return m.ID
	}
	shared, own := post("shared rollout", ann, bob), post("own rollout", bob)
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`DELETE FROM agents WHERE id = ?`, bob.ID)
		return err
	})
	again := createAgent(t, db, "bob-again")
	if again.ID != bob.ID {
		t.Fatalf("the new agent has ID %d, want the deleted one's, %d", again.ID, bob.ID)
	}
	for _, tt := range []struct {
		name   string
		reader int64
		want   []int64
	}{
		{"the new agent", again.ID, []int64{}},
		{"ann", ann.ID, []int64{shared}},
		{"the admin", 0, []int64{shared, own}},
	} {
		if got := findWord(t, db, "rollout", tt.reader); !slices.Equal(got, tt.want) {
			t.Errorf("%s finds %v, want %v", tt.name, got, tt.want)
		}
	}
	checkIndex(t, db)
}

// A message written and deleted in one write transaction is not found
// (the index's entry is written at the end of the transaction, after the
// delete).
func TestSearchWrittenAndDeletedInOneWrite(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ann := createAgent(t, db, "ann")
	mustUpdate(t, db, func(tx hub.Tx) error {
		m := &hub.Message{From: "x", Body: "fleeting rollout", Kind: hub.KindMessage, CreatedAt: t0}
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: ann.ID}}); err != nil {
			return err
		}
		_, err := tx.(*Tx).exec(`DELETE FROM messages WHERE id = ?`, m.ID)
		return err
	})
	for _, reader := range []int64{0, ann.ID} {
		mustView(t, db, func(tx hub.Tx) error {
			hits, err := tx.SearchMessages(hub.SearchQuery{Terms: [][]string{{"rollout"}}, ReaderID: reader, Limit: 10})
			if err == nil && len(hits) != 0 {
				t.Errorf("reader %d finds %d hits, want none", reader, len(hits))
			}
			return err
		})
	}
}

// A write of more messages than one index statement holds is indexed
// whole, the ones it deleted again left out, whatever the statement's rows
// past its entries (the padding to a power of two) hold.
func TestSearchIndexesLargeWrite(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ann := createAgent(t, db, "ann")
	const n = 2*indexChunk + 3
	mustUpdate(t, db, func(tx hub.Tx) error {
		for i := range n {
			m := &hub.Message{From: "x", Body: fmt.Sprintf("bulk note %d", i), Kind: hub.KindMessage, CreatedAt: t0}
			if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: ann.ID}}); err != nil {
				return err
			}
			if i%10 == 0 {
				if _, err := tx.(*Tx).exec(`DELETE FROM messages WHERE id = ?`, m.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var found int
	mustView(t, db, func(tx hub.Tx) error {
		return tx.(*Tx).queryRow(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'bulk'`).Scan(&found)
	})
	if want := n - (n+9)/10; found != want {
		t.Errorf("the index holds %d of the write's messages, want %d", found, want)
	}
	checkIndex(t, db)
}

// Migration 0014 indexes the messages already there with their readers: a
// store taken back to the index of 0010 (its objects dropped and 0010's
// statements run again, with data in it) is found by reader after
// reopening.
func TestSearchReadersMigrated(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	db := openDB(t, path)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	var ids []int64
	for _, to := range [][]*hub.Agent{{ann}, {ann, bob}, {bob}} {
		m := &hub.Message{From: "x", Body: "migrated rollout", Kind: hub.KindMessage, CreatedAt: t0}
		var ds []hub.Delivery
		for _, a := range to {
			ds = append(ds, hub.Delivery{AgentID: a.ID})
		}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, ds) })
		ids = append(ids, m.ID)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	old := migrationText(t, "0010_search.sql")
	raw := rawDB(t, path)
	if _, err := raw.Exec(`DROP TRIGGER messages_fts_delete; DROP TRIGGER messages_fts_update_before; DROP TRIGGER messages_fts_update_after;
		DROP TRIGGER messages_fts_undeliver_before; DROP TRIGGER messages_fts_undeliver_after;
		DROP TABLE messages_fts; DROP VIEW messages_fts_source; DROP TABLE messages_tokens;
		` + old); err != nil {
		t.Fatalf("back to 0010: %v", err)
	}
	rerun(t, raw, "0014_search_readers.sql", "0015_lighter_nudges.sql") // as the migrator ran them
	db = openDB(t, path)
	for _, tt := range []struct {
		reader int64
		want   []int64
	}{{ann.ID, ids[:2]}, {bob.ID, ids[1:]}, {0, ids}} {
		var got []int64
		mustView(t, db, func(tx hub.Tx) error {
			hits, err := tx.SearchMessages(hub.SearchQuery{Terms: [][]string{{"rollout"}}, ReaderID: tt.reader, Limit: 10})
			for _, h := range hits {
				got = append(got, h.Message.ID)
			}
			return err
		})
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("after migrating, reader %d finds %v, want %v", tt.reader, got, tt.want)
		}
	}
}

// Migration 0015 takes the notices already indexed out of the index: a
// store whose view and index are taken back to 0014's (every message
// indexed, with data in it) finds only the agents' message after
// reopening, and the index agrees with its view, also after the notice's
// reader is deleted and the notice pruned.
func TestSearchNoticesMigrated(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	db := openDB(t, path)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	var said int64
	for i, kind := range []string{hub.KindNudge, hub.KindHeartbeat, hub.KindMessage, hub.KindNudge} {
		m := &hub.Message{From: "x", Body: "migrated notice", Kind: kind, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		to := []hub.Delivery{{AgentID: ann.ID}, {AgentID: bob.ID}}
		mustUpdate(t, db, func(tx hub.Tx) error { return tx.InsertMessage(m, to) })
		if kind == hub.KindMessage {
			said = m.ID
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	old := migrationText(t, "0014_search_readers.sql")
	view := old[strings.Index(old, "CREATE VIEW"):]
	view = view[:strings.Index(view, ";")+1]
	raw := rawDB(t, path)
	if _, err := raw.Exec(`DROP VIEW messages_fts_source;` + view + `
		INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');`); err != nil {
		t.Fatalf("back to 0014: %v", err)
	}
	var indexed int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'notice'`).Scan(&indexed); err != nil || indexed != 4 {
		t.Fatalf("before migrating: %d messages indexed (%v), want all 4", indexed, err)
	}
	rerun(t, raw, "0015_lighter_nudges.sql") // as the migrator ran it
	db = openDB(t, path)
	find := func(when string) {
		t.Helper()
		for _, reader := range []int64{0, ann.ID} {
			if got := findWord(t, db, "notice", reader); !slices.Equal(got, []int64{said}) {
				t.Errorf("%s: reader %d finds %v, want only the message %d", when, reader, got, said)
			}
		}
		checkIndex(t, db)
	}
	find("migrated")
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`DELETE FROM agents WHERE id = ?`, bob.ID)
		return err
	})
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.DeleteMessagesBefore(t0.Add(2*time.Second), 10)
		return err
	})
	find("reader deleted, notices pruned")
}

// rerun runs the named migrations again on raw, as the migrator did: a
// test that takes a store back to before them checks what they do to the
// data it holds, whatever migrations came after.
func rerun(t *testing.T, raw *sql.DB, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := raw.Exec(migrationText(t, f)); err != nil {
			t.Fatalf("migrate %s again: %v", f, err)
		}
	}
}

// findWord returns the IDs, in order, of the messages a search for word
// finds for reader (0: the admin).
func findWord(t *testing.T, db *DB, word string, reader int64) []int64 {
	t.Helper()
	var hits []hub.SearchHit
	mustView(t, db, func(tx hub.Tx) (err error) {
		hits, err = tx.SearchMessages(hub.SearchQuery{Terms: [][]string{{word}}, ReaderID: reader, Limit: 100})
		return err
	})
	got := []int64{}
	for _, h := range hits {
		got = append(got, h.Message.ID)
	}
	slices.Sort(got)
	return got
}

// checkIndex runs FTS4's integrity check, which reads the view the index
// is built from back and fails when the index disagrees with it.
func checkIndex(t *testing.T, db *DB) {
	t.Helper()
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.(*Tx).exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`)
		return err
	})
}

// migrationText returns the SQLite text of the migration named name.
func migrationText(tb testing.TB, name string) string {
	tb.Helper()
	ms, err := migrations()
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			return m.SQL
		}
	}
	tb.Fatalf("no migration %s", name)
	return ""
}
