package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// testInjectionState stores and reads back an agent's injection state: the
// zero state before any write, then what was put, per agent, each with the
// agent's read cursor and its newest delivery; an unknown agent's is not
// found.
func testInjectionState(t *testing.T, h NewDB) {
	t.Parallel()
	db := fresh(t, h)
	ann, bob := createAgent(t, db, "ann"), createAgent(t, db, "bob")
	mustView(t, db, func(tx hub.Tx) error {
		st, _, latest, err := tx.InjectionState(ann.ID)
		if err == nil && (*st != hub.InjectionState{AgentID: ann.ID} || latest != 0) {
			t.Errorf("InjectionState before any write = %+v, newest delivery %d; want the zero state of agent %d, 0", *st, latest, ann.ID)
		}
		if _, _, _, err := tx.InjectionState(9999); hub.ErrorCode(err) != hub.ENOTFOUND {
			t.Errorf("an unknown agent's InjectionState: %v, want ENOTFOUND", err)
		}
		return err
	})
	want := hub.InjectionState{AgentID: ann.ID, UpTo: 42, StopHolds: 2, UpdatedAt: t0}
	mustUpdate(t, db, func(tx hub.Tx) error { return tx.PutInjectionState(want) })
	want.UpTo, want.StopHolds = 43, 0
	mustUpdate(t, db, func(tx hub.Tx) error {
		if err := tx.PutInjectionState(want); err != nil {
			return err
		}
		bob.ReadUpTo = 7
		return tx.UpdateAgent(bob)
	})
	first := insertMessage(t, db, "", []*hub.Agent{ann, bob})
	newest := insertMessage(t, db, "", []*hub.Agent{bob})
	mustView(t, db, func(tx hub.Tx) error {
		got, readUpTo, latest, err := tx.InjectionState(ann.ID)
		if err != nil {
			return err
		}
		if !got.UpdatedAt.Equal(want.UpdatedAt) || got.UpTo != want.UpTo || got.StopHolds != want.StopHolds || got.AgentID != want.AgentID || readUpTo != 0 || latest != first {
			t.Errorf("InjectionState = %+v, read cursor %d, newest delivery %d; want %+v, 0, %d", *got, readUpTo, latest, want, first)
		}
		other, readUpTo, latest, err := tx.InjectionState(bob.ID)
		if err == nil && (other.UpTo != 0 || readUpTo != 7 || latest != newest) {
			t.Errorf("bob's InjectionState = %+v, read cursor %d, newest delivery %d; want zero, 7, %d: states are per agent", *other, readUpTo, latest, newest)
		}
		return err
	})
}

// testTakeInjectionRace posts messages to one agent and lets hooks on two
// handles (two hub processes) take injections concurrently: every message
// is injected exactly once, none twice, none lost, and the stored cursor
// ends at the newest.
func testTakeInjectionRace(t *testing.T, h NewDB) {
	t.Parallel()
	dbs, svcs := twoServices(t, h)
	ann, bob := createAgent(t, dbs[0], "ann"), createAgent(t, dbs[0], "bob")
	const posts, takers = 40, 6
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := false; !done; {
				select {
				case <-stop:
					done = true // one last take after the posts end
				default:
				}
				inj, err := svcs[i%2].Injections.TakeInjection(t.Context(), bob, 3)
				if err != nil {
					t.Errorf("TakeInjection: %v", err)
					return
				}
				mu.Lock()
				for _, m := range inj.Messages {
					seen[m.ID]++
				}
				seen[-1] += int(inj.More) // passed over, counted
				mu.Unlock()
			}
		}()
	}
	var ids []int64
	for i := range posts {
		m, err := svcs[i%2].Messages.Post(t.Context(), ann, "", hub.PostRequest{To: []string{"bob"}, Body: fmt.Sprintf("note %d", i)})
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		ids = append(ids, m.ID)
	}
	close(stop)
	wg.Wait()
	shown := 0
	for _, id := range ids {
		switch n := seen[id]; {
		case n > 1:
			t.Errorf("message %d injected %d times, want at most once", id, n)
		case n == 1:
			shown++
		}
	}
	if shown+seen[-1] != posts {
		t.Errorf("%d injected + %d passed over = %d, want every one of the %d posts exactly once", shown, seen[-1], shown+seen[-1], posts)
	}
	mustView(t, dbs[1], func(tx hub.Tx) error {
		st, _, _, err := tx.InjectionState(bob.ID)
		if err == nil && st.UpTo != ids[len(ids)-1] {
			t.Errorf("stored injection cursor = %d, want the newest message %d", st.UpTo, ids[len(ids)-1])
		}
		return err
	})
}
