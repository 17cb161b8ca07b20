package hub

import (
	"sync"
	"sync/atomic"
	"time"
)

// WaitLimits bounds parked WaitForMessages calls.
type WaitLimits struct {
	PerAgent int // parked waits one agent may hold at once
	Total    int // parked waits in the whole hub
}

// Waiters is the in-process notifier behind WaitForMessages: a registry of
// parked waits by agent. A wait registers before it checks the store, so a
// message committed after the check but before the wait parks still finds
// its wake-up signal pending (the channel is buffered).
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
	byAgent   map[int64]*Waiter // the first of each agent's waits
	total     int
	epoch     uint64              // bumped by every Revoke (waiter_revoke.go)
	revokedAt map[int64]uint64    // agent → epoch of its last Revoke
	onRevoke  func(agentID int64) // also ends the agent's parks on inbox items (set by NewInbox)

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
	next, prev *Waiter               // the agent's other waits; guarded by ws.mu
	closed     bool                  // guarded by ws.mu
	err        atomic.Pointer[error] // why the wait was revoked; set before c is signalled
	token      []byte                // hash of the token the wait was authenticated with (nil: none)
	expired    atomic.Bool           // its timeout passed (expire); set before c is signalled
	expiryIdx  int32                 // index in ws.expiries, -1 when not there; guarded by ws.mu
	deadline   time.Duration         // when it expires, since ws.base; guarded by ws.mu
}

// NewWaiters returns an empty registry with the given limits, whose
// waits' timeouts run on clock.
func NewWaiters(limits WaitLimits, clock Clock) *Waiters {
	return &Waiters{limits: limits, clock: clock, feed: NewFeed(defaultFeedSubscribers), byAgent: make(map[int64]*Waiter), base: clock.Now()}
}

// Register adds a wait for agentID whose caller was authenticated with the
// token whose hash is token at revocation epoch epoch (Waiters.Epoch).
// Errors: EEXHAUSTED past a limit, EUNAUTHORIZED when the agent's token
// changed since epoch.
func (ws *Waiters) Register(agentID int64, epoch uint64, token []byte) (*Waiter, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.revokedAt[agentID] > epoch {
		return nil, errRevoked()
	}
	if ws.total >= ws.limits.Total {
		return nil, Errorf(EEXHAUSTED, "the hub already holds %d parked waits (its limit): retry in a few seconds, or raise --max-waiters", ws.limits.Total)
	}
	first := ws.byAgent[agentID]
	if ws.countLocked(first) >= ws.limits.PerAgent {
		return nil, Errorf(EEXHAUSTED, "this agent already has %d parked waits (the per-agent limit): end or cancel one before starting another", ws.limits.PerAgent)
	}
	w := &Waiter{ws: ws, agentID: agentID, c: make(chan struct{}, 1), next: first, token: token, expiryIdx: -1}
	if first != nil {
		first.prev = w
	}
	ws.byAgent[agentID] = w
	ws.total++
	return w, nil
}

// countLocked returns the length of the list of waits starting at w.
func (ws *Waiters) countLocked(w *Waiter) int {
	n := 0
	for ; w != nil; w = w.next {
		n++
	}
	return n
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
	ws.total--
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
}

// Notify wakes every wait of the given agents.
func (ws *Waiters) Notify(agentIDs ...int64) {
	if len(agentIDs) > 0 {
		ws.feed.Publish(TopicMessages)
		ws.feed.AgentsChanged(agentIDs...) // their unread counts
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, id := range agentIDs {
		for w := ws.byAgent[id]; w != nil; w = w.next {
			w.signal()
		}
	}
}

// WakeAll wakes every parked wait (at shutdown, so that each answers).
func (ws *Waiters) WakeAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, first := range ws.byAgent {
		for w := first; w != nil; w = w.next {
			w.signal()
		}
	}
}

// Count returns the number of parked waits in total.
func (ws *Waiters) Count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.total
}

// AgentCount returns the number of parked waits of one agent.
func (ws *Waiters) AgentCount(agentID int64) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.countLocked(ws.byAgent[agentID])
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
