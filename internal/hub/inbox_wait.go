package hub

import (
	"context"
	"sync"
	"time"
)

// answerWaits is the registry of calls parked on inbox items (a hook's
// approval, an ask_human question), in the style of Waiters: a call
// registers before it looks at its item, so an answer committed between
// the look and the park still finds the wake-up pending (the channel is
// buffered), and AnswerItem wakes the item's calls right after its commit.
type answerWaits struct {
	max int

	mu      sync.Mutex
	byItem  map[int64][]*itemPark
	byAgent map[int64]int // parks per agent (park.go: maxItemParks)
	total   int
}

// itemPark is one call parked on an item.
type itemPark struct {
	c       chan struct{}
	agentID int64
	revoked bool // guarded by answerWaits.mu
}

func newAnswerWaits(max int) *answerWaits {
	return &answerWaits{max: max, byItem: map[int64][]*itemPark{}, byAgent: map[int64]int{}}
}

// register adds a wait of agentID on item id. EEXHAUSTED past the hub's
// limit or the agent's (maxItemParks).
func (w *answerWaits) register(id, agentID int64) (*itemPark, func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total >= w.max {
		return nil, nil, Errorf(EEXHAUSTED, "the hub already holds %d calls waiting for people (its limit): retry shortly", w.max)
	}
	if w.byAgent[agentID] >= maxItemParks {
		return nil, nil, Errorf(EEXHAUSTED, "this agent already has %d calls waiting for people (approvals and questions, the per-agent limit): answer or cancel one first", maxItemParks)
	}
	p := &itemPark{c: make(chan struct{}, 1), agentID: agentID}
	w.byItem[id] = append(w.byItem[id], p)
	w.byAgent[agentID]++
	w.total++
	done := false
	return p, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if done {
			return
		}
		done = true
		ps := w.byItem[id]
		for i, x := range ps {
			if x == p {
				ps = append(ps[:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(w.byItem, id)
		} else {
			w.byItem[id] = ps
		}
		if w.byAgent[agentID]--; w.byAgent[agentID] == 0 {
			delete(w.byAgent, agentID)
		}
		w.total--
	}, nil
}

// revoke ends the parks of agentID: its token was revoked or rotated, or
// it was disabled or deleted (Waiters.Revoke calls it).
func (w *answerWaits) revoke(agentID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ps := range w.byItem {
		for _, p := range ps {
			if p.agentID == agentID && !p.revoked {
				p.revoked = true
				select {
				case p.c <- struct{}{}:
				default:
				}
			}
		}
	}
}

// ended reports whether p was revoked.
func (w *answerWaits) ended(p *itemPark) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return p.revoked
}

// notify wakes the calls parked on the items.
func (w *answerWaits) notify(ids ...int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		for _, p := range w.byItem[id] {
			select {
			case p.c <- struct{}{}:
			default:
			}
		}
	}
}

// items returns the IDs of the items calls are parked on.
func (w *answerWaits) items() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int64, 0, len(w.byItem))
	for id := range w.byItem {
		ids = append(ids, id)
	}
	return ids
}

// parkOn parks agentID's call until item id leaves the open state (look
// says so), d passes on clock, ctx ends, stop is closed (the hub stops) or
// the agent is revoked. It registers before its first look, and returns
// the item as last seen.
func (w *answerWaits) parkOn(ctx context.Context, id, agentID int64, clock Clock, d time.Duration, stop <-chan struct{}, look func() (*InboxItem, error)) (*InboxItem, error) {
	p, done, err := w.register(id, agentID)
	if err != nil {
		return nil, err
	}
	defer done()
	t := clock.NewTimer(d)
	defer t.Stop()
	for {
		it, err := look()
		if err != nil || !it.Open() {
			return it, err
		}
		select {
		case <-p.c:
			if w.ended(p) {
				return it, nil
			}
		case <-t.C():
			return it, nil
		case <-ctx.Done():
			return it, nil
		case <-stop:
			return it, nil
		}
	}
}
