package admission

import (
	"context"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
)

// searchSlots bound the searches running at once: one per caller, and a
// few in the whole hub, so that searches (the costliest reads: a phrase
// query walks the index) never hold every read connection of the store
// and other agents' reads go on unaffected. A search past the hub's slots
// waits for one, up to a bound.
type searchSlots struct {
	all   chan struct{}
	queue time.Duration
	clock hub.Clock

	mu   sync.Mutex
	busy map[int64]bool // callers with a search running (the admin is -1)
}

func newSearchSlots(n int, queue time.Duration, clock hub.Clock) *searchSlots {
	if n <= 0 {
		n = 2
	}
	if queue <= 0 {
		queue = 2 * time.Second
	}
	return &searchSlots{all: make(chan struct{}, n), queue: queue, clock: clock, busy: map[int64]bool{}}
}

// acquire takes a slot for caller id's search: ResourceExhausted when the
// caller already runs one, or when no slot frees within the queue bound.
func (s *searchSlots) acquire(ctx context.Context, id int64) (release func(), err error) {
	s.mu.Lock()
	if s.busy[id] {
		s.mu.Unlock()
		return nil, refuseFor(codes.ResourceExhausted, time.Second,
			"a search of yours is still running: the hub runs one search per caller at a time; wait for its answer")
	}
	s.busy[id] = true
	s.mu.Unlock()
	free := func() {
		s.mu.Lock()
		delete(s.busy, id)
		s.mu.Unlock()
	}
	t := s.clock.NewTimer(s.queue)
	defer t.Stop()
	select {
	case s.all <- struct{}{}:
		// The caller is free for its next search before the slot is:
		// the other way round, a search admitted into the freed slot
		// could end, and the caller's next search come, before free ran.
		return func() { free(); <-s.all }, nil
	case <-ctx.Done():
		free()
		return nil, ctx.Err()
	case <-t.C():
		free()
		return nil, refuseFor(codes.ResourceExhausted, time.Second,
			"the hub is busy with other searches: retry in a second")
	}
}
