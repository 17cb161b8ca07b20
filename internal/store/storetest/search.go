package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// searchCorpus is what the search tests find things in.
type searchCorpus struct {
	db               hub.Store
	bob, carol       *hub.Agent
	deploy, deployed int64 // "deploying the service", "deployed" (to carol, in #ops)
	disk, full       int64 // "disk full" (a phrase), "full of disk"
	reply            int64 // replies to disk
	noise, late      int64 // "error" three times in a short body, "error" once in a long body (an hour later)
}

// post inserts one message from sender, delivered to each of to.
func post(tb testing.TB, db hub.Store, m hub.Message, to ...*hub.Agent) int64 {
	tb.Helper()
	if m.Kind == "" {
		m.Kind = hub.KindMessage
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = t0
	}
	var ds []hub.Delivery
	for _, a := range to {
		ds = append(ds, hub.Delivery{AgentID: a.ID})
		if m.Channel == "" {
			m.To = append(m.To, a.Name)
		}
	}
	mustUpdate(tb, db, func(tx hub.Tx) error { return tx.InsertMessage(&m, ds) })
	return m.ID
}

func newSearchCorpus(t *testing.T, h NewDB) *searchCorpus {
	db := fresh(t, h)
	c := &searchCorpus{db: db, bob: createAgent(t, db, "bob"), carol: createAgent(t, db, "carol")}
	c.deploy = post(t, db, hub.Message{From: "alice", Body: "I am deploying the payment service now"}, c.bob)
	c.deployed = post(t, db, hub.Message{From: "dave", Channel: "#ops", Body: "Deployed. Nothing else changed"}, c.bob, c.carol)
	c.disk = post(t, db, hub.Message{From: "alice", Body: "node 3: disk full, writes refused"}, c.bob)
	c.full = post(t, db, hub.Message{From: "alice", Body: "the cupboard is full of disk images"}, c.bob)
	c.reply = post(t, db, hub.Message{From: "bob", Body: "freed the disk on node 3", ReplyTo: c.disk}, c.carol)
	c.noise = post(t, db, hub.Message{From: "alice", Body: "error error error", CreatedAt: t0.Add(time.Minute)}, c.bob)
	long := "an error somewhere in a long report " + strings.Repeat("with many other words about unrelated things ", 20)
	c.late = post(t, db, hub.Message{From: "alice", Body: long, CreatedAt: t0.Add(time.Hour), Priority: hub.PriorityUrgent}, c.bob)
	return c
}

// find runs a search and returns the IDs found, in order.
func (c *searchCorpus) find(t *testing.T, query string, q hub.SearchQuery) []int64 {
	t.Helper()
	return hitIDs(c.hits(t, query, q))
}

func (c *searchCorpus) hits(t *testing.T, query string, q hub.SearchQuery) []hub.SearchHit {
	t.Helper()
	terms, err := hub.ParseSearchTerms(query)
	if err != nil {
		t.Fatalf("ParseSearchTerms(%q): %v", query, err)
	}
	q.Terms = terms
	if q.Limit == 0 {
		q.Limit = 50
	}
	var hits []hub.SearchHit
	mustView(t, c.db, func(tx hub.Tx) error {
		hits, err = tx.SearchMessages(q)
		return err
	})
	return hits
}

func hitIDs(hits []hub.SearchHit) []int64 {
	out := []int64{}
	for _, h := range hits {
		out = append(out, h.Message.ID)
	}
	return out
}

// sorted returns ids in increasing order (for results whose rank order the
// test does not decide).
func sorted(ids []int64) []int64 { return slices.Sorted(slices.Values(ids)) }

// testSearchWords: stemming, case, phrases, every word required, and
// words found in nothing.
func testSearchWords(t *testing.T, h NewDB) {
	t.Parallel()
	c := newSearchCorpus(t, h)
	for _, tt := range []struct {
		query string
		want  []int64
	}{
		{"deploys", sorted([]int64{c.deploy, c.deployed})}, // stemmed: deploying, Deployed
		{"DEPLOY payment", []int64{c.deploy}},              // case; every word required
		{"disk full", sorted([]int64{c.disk, c.full})},     // words in any order
		{`"disk full"`, []int64{c.disk}},                   // the phrase
		{`"full disk"`, []int64{}},
		{"node-3 disk", sorted([]int64{c.disk, c.reply})}, // punctuation splits words: the phrase "node 3"
		{"kubernetes", []int64{}},
	} {
		if got := sorted(c.find(t, tt.query, hub.SearchQuery{})); !slices.Equal(got, tt.want) {
			t.Errorf("search %q = %v, want %v", tt.query, got, tt.want)
		}
	}
}

// testSearchFilters: reader, sender, channel, thread, time range, paging,
// ranking and the snippet.
func testSearchFilters(t *testing.T, h NewDB) {
	t.Parallel()
	c := newSearchCorpus(t, h)
	for _, tt := range []struct {
		name  string
		query string
		q     hub.SearchQuery
		want  []int64
	}{
		{"bob reads", "disk", hub.SearchQuery{ReaderID: c.bob.ID}, sorted([]int64{c.disk, c.full})},
		{"carol reads", "disk", hub.SearchQuery{ReaderID: c.carol.ID}, []int64{c.reply}},
		{"carol's channel", "deploy", hub.SearchQuery{ReaderID: c.carol.ID}, []int64{c.deployed}},
		{"sender", "deploy", hub.SearchQuery{Sender: "alice"}, []int64{c.deploy}},
		{"channel", "deploy", hub.SearchQuery{Channel: "#ops"}, []int64{c.deployed}},
		{"thread", "disk", hub.SearchQuery{Thread: c.disk}, sorted([]int64{c.disk, c.reply})},
		{"since", "error", hub.SearchQuery{Since: t0.Add(30 * time.Minute)}, []int64{c.late}},
		{"until", "error", hub.SearchQuery{Until: t0.Add(time.Hour)}, []int64{c.noise}},
		{"until is exclusive", "error", hub.SearchQuery{Since: t0.Add(time.Minute), Until: t0.Add(time.Hour)}, []int64{c.noise}},
		{"high and above", "error", hub.SearchQuery{MinPriority: hub.PriorityHigh}, []int64{c.late}},
		{"normal and above", "error", hub.SearchQuery{MinPriority: hub.PriorityNormal}, sorted([]int64{c.noise, c.late})},
	} {
		if got := sorted(c.find(t, tt.query, tt.q)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: search %q = %v, want %v", tt.name, tt.query, got, tt.want)
		}
	}

	// The short body saying "error" three times ranks above the long one
	// saying it once; pages follow the rank.
	hits := c.hits(t, "error", hub.SearchQuery{})
	if got, want := hitIDs(hits), []int64{c.noise, c.late}; !slices.Equal(got, want) {
		t.Fatalf("ranked = %v, want %v", got, want)
	}
	if hits[0].Score <= hits[1].Score {
		t.Errorf("scores %v, %v: want the first higher", hits[0].Score, hits[1].Score)
	}
	if got := c.find(t, "error", hub.SearchQuery{Limit: 1, Offset: 1}); !slices.Equal(got, []int64{c.late}) {
		t.Errorf("second page = %v, want [%d]", got, c.late)
	}
	snip := c.hits(t, `"disk full"`, hub.SearchQuery{})[0]
	if !strings.Contains(snip.Snippet, "**disk**") || !strings.Contains(snip.Snippet, "**full**") {
		t.Errorf("snippet %q does not mark the matched words", snip.Snippet)
	}
	if snip.Message.Body != "node 3: disk full, writes refused" || snip.Message.From != "alice" || !snip.Message.CreatedAt.Equal(t0) {
		t.Errorf("hit message = %+v, want the disk message", snip.Message)
	}
	long := c.hits(t, "error", hub.SearchQuery{})[1]
	if len(long.Snippet) >= len(long.Message.Body)/2 {
		t.Errorf("snippet of a %d-byte body is %d bytes: want a fragment", len(long.Message.Body), len(long.Snippet))
	}
}

// testSearchForgetsDeleted: a pruned message is no longer found.
func testSearchForgetsDeleted(t *testing.T, h NewDB) {
	t.Parallel()
	c := newSearchCorpus(t, h)
	mustUpdate(t, c.db, func(tx hub.Tx) error {
		_, err := tx.DeleteMessagesBefore(t0.Add(30*time.Minute), 100)
		return err
	})
	if got := c.find(t, "error", hub.SearchQuery{}); !slices.Equal(got, []int64{c.late}) {
		t.Errorf("after pruning, search error = %v, want only [%d]", got, c.late)
	}
	if got := c.find(t, "disk", hub.SearchQuery{}); len(got) != 0 {
		t.Errorf("after pruning, search disk = %v, want nothing", got)
	}
}

// testSearchReaders: an agent finds exactly the messages delivered to it,
// whichever way they were written (one post, a batch), whatever their
// text says (a body may spell what a store uses to mark readers), and not
// a channel's messages from before it joined; pruning keeps that true.
func testSearchReaders(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob, cat := createAgent(t, db, "ann"), createAgent(t, db, "bob"), createAgent(t, db, "cat")
	// #ops before cat joins: ann and bob.
	before := post(t, db, hub.Message{From: "dan", Channel: "#ops", Body: "rollout one started"}, ann, bob)
	// Bodies that spell reader marks of cat, to ann only.
	spelled := post(t, db, hub.Message{From: "dan", Body: fmt.Sprintf("rollout §%d readers:§%d %d", cat.ID, cat.ID, cat.ID)}, ann)
	// cat has joined: ann, bob and cat.
	after := post(t, db, hub.Message{From: "dan", Channel: "#ops", Body: "rollout two started", Mentions: []string{"cat"}}, ann, bob, cat)
	batch := []*hub.Message{
		{From: "dan", To: []string{"bob"}, Body: "rollout three", Kind: hub.KindMessage, CreatedAt: t0},
		{From: "dan", To: []string{"cat"}, Body: "rollout four", Kind: hub.KindMessage, CreatedAt: t0},
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertMessages(batch, [][]hub.Delivery{{{AgentID: bob.ID}}, {{AgentID: cat.ID, Mention: true}}})
	})
	c := &searchCorpus{db: db}
	want := map[string][]int64{
		"ann": sorted([]int64{before, spelled, after}),
		"bob": sorted([]int64{before, after, batch[0].ID}),
		"cat": sorted([]int64{after, batch[1].ID}),
	}
	check := func(when string, want map[string][]int64) {
		t.Helper()
		for _, a := range []*hub.Agent{ann, bob, cat} {
			if got := sorted(c.find(t, "rollout", hub.SearchQuery{ReaderID: a.ID})); !slices.Equal(got, want[a.Name]) {
				t.Errorf("%s: %s searches rollout = %v, want %v", when, a.Name, got, want[a.Name])
			}
		}
		all := sorted(slices.Concat(want["ann"], want["bob"], want["cat"]))
		if got := sorted(c.find(t, "rollout", hub.SearchQuery{})); !slices.Equal(got, slices.Compact(all)) {
			t.Errorf("%s: the admin searches rollout = %v, want %v", when, got, slices.Compact(all))
		}
	}
	check("posted", want)
	// No query reaches the marks of readers: what the body spells is found
	// as text, for ann only.
	for _, query := range []string{fmt.Sprintf("§%d", cat.ID), fmt.Sprintf("readers §%d", cat.ID), fmt.Sprintf(`"§%d"`, cat.ID)} {
		for _, a := range []*hub.Agent{ann, cat} {
			want := []int64{}
			if a == ann {
				want = []int64{spelled}
			}
			if got := c.find(t, query, hub.SearchQuery{ReaderID: a.ID}); !slices.Equal(got, want) {
				t.Errorf("%s searches %q = %v, want %v", a.Name, query, got, want)
			}
		}
	}
	// Pruning the first two leaves the others to the same readers, and a
	// message posted after the prune to bob only is bob's.
	mustUpdate(t, db, func(tx hub.Tx) error {
		_, err := tx.DeleteMessagesBefore(t0.Add(time.Nanosecond), 2)
		return err
	})
	late := post(t, db, hub.Message{From: "dan", Body: "rollout five", CreatedAt: t0.Add(time.Hour)}, bob)
	check("pruned", map[string][]int64{
		"ann": {after},
		"bob": sorted([]int64{after, batch[0].ID, late}),
		"cat": sorted([]int64{after, batch[1].ID}),
	})
}

// testSearchSkipsNotices: the hub's own notices (nudges, heartbeat pulses:
// hub.Searchable) are not found, whichever way they were written (one
// post, a batch), by the admin or their reader; everything else is, cron
// posts included; pruning the notices leaves the others found.
func testSearchSkipsNotices(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	early := t0.Add(-time.Hour)
	nudge := post(t, db, hub.Message{From: hub.SenderOrchestrator, Body: "@ann: no activity for 1h: record progress", Mentions: []string{"ann"}, Kind: hub.KindNudge, CreatedAt: early}, ann)
	pulse := post(t, db, hub.Message{From: hub.SenderOrchestrator, Body: "heartbeat pulse: record progress", Kind: hub.KindHeartbeat, CreatedAt: early}, ann)
	cron := post(t, db, hub.Message{From: hub.SenderOrchestrator, Channel: "#ops", Body: "cron: record progress in the log", Kind: hub.KindCron}, ann, bob)
	said := post(t, db, hub.Message{From: "bob", Body: "please record progress", Kind: hub.KindMessage}, ann)
	batch := []*hub.Message{
		{From: hub.SenderOrchestrator, To: []string{"bob"}, Body: "@bob: no activity: record progress", Mentions: []string{"bob"}, Kind: hub.KindNudge, CreatedAt: t0},
		{From: "ann", To: []string{"bob"}, Body: "record progress, bob", Kind: hub.KindMessage, CreatedAt: t0},
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		return tx.InsertMessages(batch, [][]hub.Delivery{{{AgentID: bob.ID, Mention: true}}, {{AgentID: bob.ID}}})
	})
	for _, m := range []struct {
		id   int64
		kind string
	}{{nudge, hub.KindNudge}, {pulse, hub.KindHeartbeat}, {batch[0].ID, hub.KindNudge}, {cron, hub.KindCron}, {said, hub.KindMessage}} {
		if got, want := hub.Searchable(m.kind), m.id == cron || m.id == said; got != want {
			t.Errorf("Searchable(%q) = %v, want %v", m.kind, got, want)
		}
	}
	c := &searchCorpus{db: db}
	check := func(when string, want map[int64][]int64) {
		t.Helper()
		for reader, ids := range want {
			if got := sorted(c.find(t, "record progress", hub.SearchQuery{ReaderID: reader})); !slices.Equal(got, ids) {
				t.Errorf("%s: reader %d searches record progress = %v, want %v", when, reader, got, ids)
			}
		}
	}
	check("posted", map[int64][]int64{
		0:      sorted([]int64{cron, said, batch[1].ID}),
		ann.ID: sorted([]int64{cron, said}),
		bob.ID: sorted([]int64{cron, batch[1].ID}),
	})
	if got := c.find(t, "activity", hub.SearchQuery{}); len(got) != 0 {
		t.Errorf("search activity = %v: a nudge's own words were found", got)
	}
	mustUpdate(t, db, func(tx hub.Tx) error {
		n, err := tx.DeleteMessagesBefore(t0, 100)
		if err == nil && n != 2 {
			t.Errorf("pruned %d messages, want the 2 notices", n)
		}
		return err
	})
	check("pruned", map[int64][]int64{
		0:      sorted([]int64{cron, said, batch[1].ID}),
		ann.ID: sorted([]int64{cron, said}),
		bob.ID: sorted([]int64{cron, batch[1].ID}),
	})
}
