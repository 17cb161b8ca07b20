package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// Message IDs are the waiters' cursors: a reader that has seen message n
// never looks below n again. So no message may become visible after one
// with a higher ID. Several handles (stand-ins for hub replicas) post at
// once, some posts rolled back, some in batches, while readers on other
// handles follow their cursor through the inbox; every reader must get
// every committed message exactly once, in ID order.
func testCursorsNeverSkip(t *testing.T, h NewDB) {
	t.Parallel()
	open := h(t)
	setup := open()
	bob := createAgent(t, setup, "bob")

	const (
		writers    = 3 // handles posting
		perWriter  = 2 // goroutines per handle
		posts      = 30
		readers    = 3
		readerPage = 7 // small pages: a reader often stops mid-stream
	)
	var (
		mu        sync.Mutex
		committed []int64
		posting   atomic.Int32
	)
	post := func(db hub.Store, n int) {
		ms := make([]*hub.Message, 1+n%3) // 1 to 3 messages per transaction
		ds := make([][]hub.Delivery, len(ms))
		for i := range ms {
			ms[i] = &hub.Message{From: "alice", To: []string{"bob"}, Body: fmt.Sprint(n), Kind: hub.KindMessage, CreatedAt: t0}
			ds[i] = []hub.Delivery{{AgentID: bob.ID}}
		}
		rollBack := n%7 == 3
		err := db.Update(context.Background(), func(tx hub.Tx) error {
			var err error
			if len(ms) == 1 {
				err = tx.InsertMessage(ms[0], ds[0])
			} else {
				err = tx.InsertMessages(ms, ds)
			}
			if err == nil && rollBack {
				err = errBoom
			}
			return err
		})
		switch {
		case rollBack && err == nil:
			t.Errorf("post %d: Update returned nil, want its error", n)
		case !rollBack && err != nil:
			t.Errorf("post %d: %v", n, err)
		case err == nil:
			mu.Lock()
			for _, m := range ms {
				committed = append(committed, m.ID)
			}
			mu.Unlock()
		}
	}

	var wg sync.WaitGroup
	got := make([][]int64, readers)
	var readerErrs atomic.Int32
	posting.Store(writers * perWriter) // before the readers start
	for r := range readers {
		db := open()
		wg.Go(func() {
			var cursor int64
			for {
				done := posting.Load() == 0 // decide before reading: a final read after the last post
				var ms []*hub.Message
				err := db.View(context.Background(), func(tx hub.Tx) (err error) {
					ms, err = tx.Inbox(bob.ID, hub.InboxQuery{After: cursor, Limit: readerPage})
					return err
				})
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					readerErrs.Add(1)
					return
				}
				for _, m := range ms {
					got[r] = append(got[r], m.ID)
					cursor = m.ID
				}
				if done && len(ms) == 0 {
					return
				}
			}
		})
	}
	var pw sync.WaitGroup
	for w := range writers {
		db := open()
		for g := range perWriter {
			pw.Go(func() {
				defer posting.Add(-1)
				for i := range posts {
					post(db, (w*perWriter+g)*posts+i)
				}
			})
		}
	}
	pw.Wait()
	wg.Wait()
	if readerErrs.Load() > 0 {
		return
	}
	slices.Sort(committed)
	if len(committed) == 0 {
		t.Fatal("nothing was committed")
	}
	for r, ids := range got {
		if !slices.Equal(ids, committed) {
			missing, extra := diff(committed, ids), diff(ids, committed)
			t.Errorf("reader %d got %d messages, want the %d committed: missing %v, not committed %v, in order: %v",
				r, len(ids), len(committed), missing, extra, slices.IsSorted(ids))
		}
	}
}

// diff returns the elements of a that are not in b.
func diff(a, b []int64) []int64 {
	in := make(map[int64]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out []int64
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
