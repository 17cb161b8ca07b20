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

	mu     sync.Mutex
	byItem map[int64][]chan struct{}
	total  int
}

func newAnswerWaits(max int) *answerWaits {
	return &answerWaits{max: max, byItem: map[int64][]chan struct{}{}}
}

// register adds a wait on item id. EEXHAUSTED past the limit.
func (w *answerWaits) register(id int64) (chan struct{}, func(), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total >= w.max {
		return nil, nil, Errorf(EEXHAUSTED, "the hub already holds %d calls waiting for people (its limit): retry shortly", w.max)
	}
	c := make(chan struct{}, 1)
	w.byItem[id] = append(w.byItem[id], c)
	w.total++
	done := false
	return c, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if done {
			return
		}
		done = true
		cs := w.byItem[id]
		for i, x := range cs {
			if x == c {
				cs = append(cs[:i], cs[i+1:]...)
				break
			}
		}
		if len(cs) == 0 {
			delete(w.byItem, id)
		} else {
			w.byItem[id] = cs
		}
		w.total--
	}, nil
}

// notify wakes the calls parked on the items.
func (w *answerWaits) notify(ids ...int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		for _, c := range w.byItem[id] {
			select {
			case c <- struct{}{}:
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

// parkOn waits until item id leaves the open state (look says so), d
// passes on clock, ctx ends or stop is closed (the hub stops). It
// registers before its first look, and returns the item as last seen.
func (w *answerWaits) parkOn(ctx context.Context, id int64, clock Clock, d time.Duration, stop <-chan struct{}, look func() (*InboxItem, error)) (*InboxItem, error) {
	c, done, err := w.register(id)
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
		case <-c:
		case <-t.C():
			return it, nil
		case <-ctx.Done():
			return it, nil
		case <-stop:
			return it, nil
		}
	}
}
