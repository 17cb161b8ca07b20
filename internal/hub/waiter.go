package hub

import (
	"sync"
	"sync/atomic"
	"time"
)

// Waiters is the hub's one registry of parked callers (park.go): agents'
// parked waits (WaitForMessages, next_task, Subscribe), calls parked on
// inbox items (inbox_wait.go), parked next_task calls by project
// (task_next_service.go) and the change streams of the Feed. All of them
// take their place by one rule (admitLocked), end when their principal is
// revoked (Revoke) or the hub stops (Stop), and are woken by key.
//
// A wait registers before it checks the store, so a message committed after
// the check but before the wait parks still finds its wake-up signal
// pending (the channel is buffered).
//
// What a parked wait holds is multiplied by the number parked (hubbench's
// memory scenario parks 10,000), so a Waiter is one small struct and one
// channel: an agent's waits are a list threaded through them rather than a
// map per agent, and a revocation comes through the same channel as a
// wake-up (the wait then finds Err set).
type Waiters struct {
	limits WaitLimits
	clock  Clock
	feed   *Feed // hears every Notify (feed.go)

	mu        sync.Mutex
	held      map[holder]int                    // places held per principal and kind (admitLocked)
	totals    [parkKinds]int                    // places held per kind
	byAgent   map[int64]*Waiter                 // the first of each agent's waits
	items     map[int64][]*itemPark             // calls parked on inbox items, by item (inbox_wait.go)
	tasks     map[string]map[*taskWait]struct{} // parked next_task calls, by project
	streams   map[*Subscription]struct{}        // the Feed's change streams
	stopped   bool                              // Stop was called
	epoch     uint64                            // bumped by every Revoke (waiter_revoke.go)
	revokedAt map[Principal]uint64              // principal → epoch of its last Revoke
	onRevoke  []func(Principal)                 // hear of every Revoke (OnRevoke)

	// The waits' timeouts (waiter_expiry.go): deadlines are durations since
	// base (monotonic on the system clock), the timer fires at the earliest.
	base        time.Time
	expiries    expiries
	expiryTimer Timer
}

// Waiter is one registered wait. Close it when the wait ends.
type Waiter struct {
	ws         *Waiters
	agentID    int64
	c          chan struct{}
	wake       func()                // also called at each wake-up, if not nil (a stream's: Stream.wake)
	next, prev *Waiter               // the agent's other waits; guarded by ws.mu
	closed     bool                  // guarded by ws.mu
	err        atomic.Pointer[error] // why the wait was revoked; set before c is signalled
	token      []byte                // hash of the token the wait was authenticated with (nil: none)
	expired    atomic.Bool           // its timeout passed (expire); set before c is signalled
	expiryIdx  int32                 // index in ws.expiries, -1 when not there; guarded by ws.mu
	deadline   time.Duration         // when it expires, since ws.base; guarded by ws.mu
}

// NewWaiters returns an empty registry with the given limits (zero item
// and stream limits take their defaults), whose waits' timeouts run on
// clock.
func NewWaiters(limits WaitLimits, clock Clock) *Waiters {
	ws := &Waiters{limits: limits.withDefaults(), clock: clock, held: map[holder]int{}, byAgent: map[int64]*Waiter{},
		items: map[int64][]*itemPark{}, tasks: map[string]map[*taskWait]struct{}{}, streams: map[*Subscription]struct{}{},
		revokedAt: map[Principal]uint64{}, base: clock.Now()}
	ws.feed = newFeed(ws)
	return ws
}

// Feed returns the change feed whose streams the registry holds.
func (ws *Waiters) Feed() *Feed { return ws.feed }

// Register adds a wait for agentID whose caller was authenticated with the
// token whose hash is token at revocation epoch epoch (Waiters.Epoch).
// Errors: EEXHAUSTED past a limit, EUNAUTHORIZED when the agent's token
// changed since epoch.
func (ws *Waiters) Register(agentID int64, epoch uint64, token []byte) (*Waiter, error) {
	return ws.register(agentID, epoch, token, nil)
}

// register is Register whose wait also calls wake, if not nil, at each
// wake-up (with the registry's lock held: wake must not block).
func (ws *Waiters) register(agentID int64, epoch uint64, token []byte, wake func()) (*Waiter, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.revokedAt[AgentPrincipal(agentID)] > epoch {
		return nil, errRevoked()
	}
	if err := ws.admitLocked(AgentPrincipal(agentID), parkWait); err != nil {
		return nil, err
	}
	first := ws.byAgent[agentID]
	w := &Waiter{ws: ws, agentID: agentID, c: make(chan struct{}, 1), wake: wake, next: first, token: token, expiryIdx: -1}
	if first != nil {
		first.prev = w
	}
	ws.byAgent[agentID] = w
	return w, nil
}

// C receives a value each time something may have arrived for the waiter,
// or its token stopped working (Err). Wake-ups are hints: the waiter
// re-checks the store.
func (w *Waiter) C() <-chan struct{} { return w.c }

// Close unregisters the wait. It is idempotent.
func (w *Waiter) Close() {
	ws := w.ws
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	ws.dropExpiryLocked(w)
	if w.prev != nil {
		w.prev.next = w.next
	} else if w.next != nil {
		ws.byAgent[w.agentID] = w.next
	} else {
		delete(ws.byAgent, w.agentID)
	}
	if w.next != nil {
		w.next.prev = w.prev
	}
	w.next, w.prev = nil, nil
	ws.releaseLocked(AgentPrincipal(w.agentID), parkWait)
}

// expire marks the wait's timeout as passed and wakes it (expireDue calls
// it), so that the wait blocks on its one channel (and its context) rather
// than on a timer's channel too.
func (w *Waiter) expire() {
	w.expired.Store(true)
	w.signal()
}

func (w *Waiter) signal() {
	select {
	case w.c <- struct{}{}:
	default: // a wake-up is already pending
	}
	if w.wake != nil {
		w.wake()
	}
}

// Notify wakes every wait of the given agents.
func (ws *Waiters) Notify(agentIDs ...int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(agentIDs) > 0 {
		ws.publishLocked(TopicMessages)
		ws.feed.agentsChangedLocked(agentIDs) // their unread counts
	}
	for _, id := range agentIDs {
		for w := ws.byAgent[id]; w != nil; w = w.next {
			w.signal()
		}
	}
}

// Stop ends every parked caller (at shutdown): it wakes every wait and
// every call parked on an inbox item, so that each answers (each sees the
// hub's shutdown), and ends every change stream, as well as those opened
// from now on.
func (ws *Waiters) Stop() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.stopped = true
	for _, first := range ws.byAgent {
		for w := first; w != nil; w = w.next {
			w.signal()
		}
	}
	for _, ps := range ws.items {
		for _, p := range ps {
			p.signal()
		}
	}
	for s := range ws.streams {
		ws.endStreamLocked(s)
	}
}

// Count returns the number of parked waits in total.
func (ws *Waiters) Count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.totals[parkWait]
}

// AgentCount returns the number of parked waits of one agent.
func (ws *Waiters) AgentCount(agentID int64) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.held[holder{AgentPrincipal(agentID), parkWait}]
}

// Agents returns the IDs of the agents with at least one parked wait.
func (ws *Waiters) Agents() []int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ids := make([]int64, 0, len(ws.byAgent))
	for id := range ws.byAgent {
		ids = append(ids, id)
	}
	return ids
}
