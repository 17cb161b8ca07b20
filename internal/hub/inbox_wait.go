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
	stop   chan struct{} // closed by Shutdown
	once   sync.Once
}

func newAnswerWaits(max int) *answerWaits {
	return &answerWaits{max: max, byItem: map[int64][]chan struct{}{}, stop: make(chan struct{})}
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

// parkOn waits until item id leaves the open state (look says so), the
// time d passes, ctx ends or the hub stops. It registers before its first
// look. It returns the item as last seen and whether it is still open.
// The timer is real time: the caller's deadline is.
func (w *answerWaits) parkOn(ctx context.Context, id int64, d time.Duration, look func() (*InboxItem, error)) (*InboxItem, error) {
	c, done, err := w.register(id)
	if err != nil {
		return nil, err
	}
	defer done()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		it, err := look()
		if err != nil || !it.Open() {
			return it, err
		}
		select {
		case <-c:
		case <-t.C:
			return it, nil
		case <-ctx.Done():
			return it, nil
		case <-w.stop:
			return it, nil
		}
	}
}

// Run is the fallback that finds answers given through another hub process
// sharing the store (PostgreSQL replicas): every interval, while calls are
// parked, one read of their items wakes those that were answered. Answers
// given through this process wake their calls at once (AnswerItem).
func (in *Inbox) Run(ctx context.Context) error {
	if in.cfg.PollInterval <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(in.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ids := in.waits.items()
		if len(ids) == 0 {
			continue
		}
		var closed []int64
		err := in.store.View(ctx, func(tx Tx) error {
			items, err := tx.InboxItemsByID(ids)
			closed = closed[:0]
			for _, it := range items {
				if !it.Open() {
					closed = append(closed, it.ID)
				}
			}
			return err
		})
		if err == nil {
			in.waits.notify(closed...)
		}
	}
}

// Shutdown makes every call parked on an item answer at once, as if its
// time had run out.
func (in *Inbox) Shutdown() {
	in.waits.once.Do(func() { close(in.waits.stop) })
}
