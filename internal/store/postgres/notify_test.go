package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// A post's notification names each recipient once and reads back; when
// the recipients do not fit in PostgreSQL's payload limit it names the
// messages only, and anything that is not a payload of postedPayload
// (an older replica's bare ID included) reads as "recipients unknown".
func TestPostedPayload(t *testing.T) {
	for _, tc := range []struct {
		first, last int64
		agents      []int64
		payload     string
		want        []int64
	}{
		{7, 7, []int64{3}, "7-7:3", []int64{3}},
		{7, 9, []int64{3, 4, 3, 5, 4}, "7-9:3,4,5", []int64{3, 4, 5}},
		{12, 12, nil, "12-12:", nil},
	} {
		p := postedPayload(tc.first, tc.last, tc.agents)
		if p != tc.payload {
			t.Errorf("postedPayload(%d, %d, %v) = %q, want %q", tc.first, tc.last, tc.agents, p, tc.payload)
		}
		first, last, agents, known := parsePosted(p)
		if !known || first != tc.first || last != tc.last || !slices.Equal(agents, tc.want) {
			t.Errorf("parsePosted(%q) = %d, %d, %v, %v; want %d, %d, %v, true", p, first, last, agents, known, tc.first, tc.last, tc.want)
		}
	}

	many := make([]int64, 2000)
	for i := range many {
		many[i] = int64(1000 + i) // 2,000 × "NNNN," is past 8,000 bytes
	}
	p := postedPayload(5, 6, many)
	if p != "5-6" {
		t.Errorf("postedPayload of 2,000 recipients = %.40q… (%d bytes), want \"5-6\"", p, len(p))
	}
	if _, _, _, known := parsePosted(p); known {
		t.Errorf("parsePosted(%q) says the recipients are known", p)
	}
	fits := postedPayload(5, 6, many[:1598]) // 4 + 1,598 × 5 - 1 = 7,993 bytes
	if len(fits) > maxPayload || !strings.HasPrefix(fits, "5-6:1000,") {
		t.Errorf("postedPayload of 1,598 recipients = %d bytes, %.20q…; want them all within %d bytes", len(fits), fits, maxPayload)
	}

	for _, p := range []string{"", "42", "5-6x", "x-6:1", "5-x:1", "6-5:1", "0-1:1", "5-6:1,,2", "5-6:1,a", "5-6:-"} {
		if first, last, agents, known := parsePosted(p); known {
			t.Errorf("parsePosted(%q) = %d, %d, %v, true; want unknown", p, first, last, agents)
		}
	}
}

// report is one call of Reports.PostedTo (known) or Reports.Posted.
type report struct {
	first, last int64
	agents      []int64
	known       bool
}

// recordPosts listens on a handle of its own on the schema at u and sends
// each report of a post on the returned channel, until the test ends. It
// returns once listening (after Watch's first report, for the posts made
// before it).
func recordPosts(tb testing.TB, u string) <-chan report {
	tb.Helper()
	db, err := Open(context.Background(), u, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	c := make(chan report, 100)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		db.Watch(ctx, Reports{
			PostedTo: func(first, last int64, agents []int64) { c <- report{first, last, agents, true} },
			Posted:   func() { c <- report{} },
			Resync:   func() int { return 0 }, AgentChanged: func(int64, hub.AgentChange) {}, ForgetAgents: func() {}, Listening: func(bool) {}, Heard: func() {},
		})
	})
	tb.Cleanup(func() { cancel(); wg.Wait(); db.Close() })
	if r := next(tb, c); r.known {
		tb.Fatalf("first report = %+v, want the look after listening", r)
	}
	return c
}

// next returns the next report, failing tb after 30 s without one.
func next(tb testing.TB, c <-chan report) report {
	tb.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(30 * time.Second):
		tb.Fatal("no report of a post within 30 s")
		return report{}
	}
}

// Every committed post is reported to the listening replicas with its
// message IDs and recipients, in commit order, so that they wake exactly
// those waits without reading the store; a rolled-back post is never
// reported; a post whose recipients do not fit in a notification is
// reported as "look for it", and the look wakes them.
func TestPostNotificationNamesRecipients(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a := newReplica(t, u, false)
	alice, bob, carol := a.agent(t, "alice"), a.agent(t, "bob"), a.agent(t, "carol")
	reports := recordPosts(t, u)
	ctx := context.Background()
	want := func(what string, first, last int64, agents ...int64) {
		t.Helper()
		r := next(t, reports)
		slices.Sort(r.agents)
		if !r.known || r.first != first || r.last != last || !slices.Equal(r.agents, agents) {
			t.Fatalf("%s: report %+v, want messages %d-%d to %v", what, r, first, last, agents)
		}
	}

	m1, err := a.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "one"})
	if err != nil {
		t.Fatal(err)
	}
	want("direct post", m1.ID, m1.ID, bob.ID)

	// A post rolled back gives its ID back and is never reported: the next
	// report is the next committed post's, with that ID.
	refused := errors.New("refused")
	err = a.db.Update(ctx, func(tx hub.Tx) error {
		m := &hub.Message{From: "alice", To: []string{"carol"}, Body: "never", Kind: hub.KindMessage, CreatedAt: time.Now()}
		if err := tx.InsertMessage(m, []hub.Delivery{{AgentID: carol.ID}}); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("rolled-back post: %v, want %v", err, refused)
	}
	m2, err := a.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob", "carol"}, Body: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if m2.ID != m1.ID+1 {
		t.Errorf("post after a rolled-back one got ID %d, want %d", m2.ID, m1.ID+1)
	}
	want("post to two after a rolled-back post", m2.ID, m2.ID, bob.ID, carol.ID)

	// A channel whose members' IDs do not fit in one notification.
	var members []hub.Delivery
	err = a.db.Update(ctx, func(tx hub.Tx) error {
		for i := range 2000 { // IDs past 1,000: 2,000 × "NNNN," is past 8,000 bytes
			ag := &hub.Agent{Name: fmt.Sprintf("member-%04d", i), CreatedAt: time.Now()}
			if err := tx.CreateAgent(ag, nil); err != nil {
				return err
			}
			members = append(members, hub.Delivery{AgentID: ag.ID})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b := newReplica(t, u, true)
	eventually(t, "B listening (beside the recorder)", func() bool { return backends(t, "hub listen "+b.db.schema) == 2 })
	wLast := b.park(t, members[len(members)-1].AgentID)
	wBob := b.park(t, bob.ID)
	big := &hub.Message{From: "alice", Channel: "all", Body: "to everyone", Kind: hub.KindMessage, CreatedAt: time.Now()}
	if err := a.db.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessage(big, members) }); err != nil {
		t.Fatal(err)
	}
	if r := next(t, reports); r.known {
		t.Fatalf("post to 2,000 members: report of %d-%d with %d recipients, want one without (they do not fit)", r.first, r.last, len(r.agents))
	}
	woken(t, wLast, "a member of the large channel, on B (B's watcher looks)")

	// The next post follows the large one: reported with its recipients
	// again, and on B it wakes exactly them.
	m3, err := a.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "three"})
	if err != nil {
		t.Fatal(err)
	}
	want("post after the large one", m3.ID, m3.ID, bob.ID)
	woken(t, wBob, "bob on B")
	select {
	case <-wLast.C():
		t.Error("the post to bob woke a member of the channel on B")
	default:
	}
}
