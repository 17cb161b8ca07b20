package hub

import "sync"

// Topic names a kind of change the feed announces. Topics are hints: a
// subscriber re-reads what it shows through the API.
type Topic uint8

// The feed's topics.
const (
	// TopicMessages: a message was delivered, or an agent's token or state
	// changed (everything that wakes parked waits).
	TopicMessages Topic = 1 << iota
	// TopicAgents: an agent call changed liveness data (activity log,
	// checkpoint, deep work, heartbeat) or the agent list.
	TopicAgents
	// TopicTick: an orchestrator tick completed (health, nudges, pulses,
	// cron runs, presence may have moved).
	TopicTick
	// TopicTasks: a task of the board changed.
	TopicTasks
	// TopicInbox: an inbox item was opened, answered, expired or withdrawn,
	// or a remembered approval changed.
	TopicInbox
)

// Topics is a set of topics.
type Topics uint8

// Has reports whether t is in the set.
func (ts Topics) Has(t Topic) bool { return ts&Topics(t) != 0 }

// Names returns the set's topics as words ("messages", "agents", "tick",
// "tasks", "inbox").
func (ts Topics) Names() []string {
	var out []string
	for _, t := range []struct {
		t    Topic
		name string
	}{{TopicMessages, "messages"}, {TopicAgents, "agents"}, {TopicTick, "tick"}, {TopicTasks, "tasks"}, {TopicInbox, "inbox"}} {
		if ts.Has(t.t) {
			out = append(out, t.name)
		}
	}
	return out
}

// Feed broadcasts changes to a bounded set of subscribers (the dashboard's
// live stream). Publishing never blocks: a subscriber that has not read yet
// sees the topics merged into one pending set.
//
// While anyone subscribes, the feed also gathers which agents' overviews
// may have changed (AgentsChanged, AgentNamed), for the one OverviewWatch
// that turns them into the rows the stream sends; with no subscriber,
// gathering costs nothing.
type Feed struct {
	max int

	mu   sync.Mutex
	subs map[*Subscription]struct{}

	changedIDs   map[int64]struct{}
	changedNames map[string]struct{}
	allChanged   bool
	changed      chan struct{} // signalled when a change is gathered
}

// Subscription is one subscriber. Close it when the subscriber leaves.
type Subscription struct {
	f       *Feed
	c       chan struct{}
	owner   StreamOwner
	done    chan struct{} // closed by End
	ended   bool          // guarded by f.mu
	pending Topics        // guarded by f.mu
	once    sync.Once
}

// defaultFeedSubscribers bounds the feed's subscribers when none is given.
const defaultFeedSubscribers = 64

// NewFeed returns a feed that holds at most max subscribers.
func NewFeed(max int) *Feed {
	if max <= 0 {
		max = defaultFeedSubscribers
	}
	return &Feed{max: max, subs: make(map[*Subscription]struct{}), changedIDs: map[int64]struct{}{},
		changedNames: map[string]struct{}{}, changed: make(chan struct{}, 1)}
}

// Subscribe adds a subscriber held by owner, within the limits of park.go:
// a person holds at most maxStreams, and people together leave
// streamsKeptForAdmin of the feed's places to the admin. Errors:
// EEXHAUSTED past a limit.
func (f *Feed) Subscribe(owner StreamOwner) (*Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) >= f.max {
		return nil, Errorf(EEXHAUSTED, "the hub already streams changes to %d pages (its limit): close a dashboard tab and retry", f.max)
	}
	if owner != AdminStreams {
		mine, people := 0, 0
		for s := range f.subs {
			if s.owner != AdminStreams {
				people++
			}
			if s.owner == owner {
				mine++
			}
		}
		if mine >= maxStreams {
			return nil, Errorf(EEXHAUSTED, "%s already holds %d change streams (the limit per person): close a dashboard tab and retry", owner, maxStreams)
		}
		if people >= f.max-streamsKeptForAdmin {
			return nil, Errorf(EEXHAUSTED, "people already hold %d change streams, the most the hub gives them (the rest are kept for the admin): close a dashboard tab and retry", people)
		}
	}
	sub := &Subscription{f: f, c: make(chan struct{}, 1), owner: owner, done: make(chan struct{})}
	f.subs[sub] = struct{}{}
	return sub, nil
}

// End ends every stream of owner: their Done channels close, and they
// hear no more changes. A person's revocation calls it.
func (f *Feed) End(owner StreamOwner) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		if s.owner == owner && !s.ended {
			s.ended = true
			close(s.done)
			delete(f.subs, s)
		}
	}
}

// Done is closed when the subscription's owner was revoked (End): the
// stream must end.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Publish announces topic to every subscriber.
func (f *Feed) Publish(topic Topic) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub := range f.subs {
		sub.pending |= Topics(topic)
		select {
		case sub.c <- struct{}{}:
		default: // already signalled; the topic joined the pending set
		}
	}
}

// AgentsChanged notes that the overviews of the agents ids may have
// changed (a delivery, a call of theirs).
func (f *Feed) AgentsChanged(ids ...int64) {
	if f == nil || len(ids) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		return
	}
	for _, id := range ids {
		f.changedIDs[id] = struct{}{}
	}
	f.signalLocked()
}

// AgentNamed notes that the overview of the agent named name may have
// changed, or that the agent is gone (an admin call naming it).
func (f *Feed) AgentNamed(name string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		return
	}
	f.changedNames[name] = struct{}{}
	f.signalLocked()
}

// AllAgentsChanged notes that any overview may have changed (messages
// pruned, for one).
func (f *Feed) AllAgentsChanged() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) > 0 {
		f.allChanged = true
		f.signalLocked()
	}
}

func (f *Feed) signalLocked() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// AgentChanges receives a value when agents' changes have been gathered
// since the last OverviewWatch.Next.
func (f *Feed) AgentChanges() <-chan struct{} { return f.changed }

// takeChanged returns the changes gathered and forgets them.
func (f *Feed) takeChanged() (ids []int64, names []string, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.changedIDs {
		ids = append(ids, id)
	}
	for n := range f.changedNames {
		names = append(names, n)
	}
	all = f.allChanged
	clear(f.changedIDs)
	clear(f.changedNames)
	f.allChanged = false
	return ids, names, all
}

// Count returns the number of subscribers.
func (f *Feed) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// C receives a value when topics are pending; read them with Take.
func (sub *Subscription) C() <-chan struct{} { return sub.c }

// Take returns the pending topics and clears them.
func (sub *Subscription) Take() Topics {
	sub.f.mu.Lock()
	defer sub.f.mu.Unlock()
	t := sub.pending
	sub.pending = 0
	return t
}

// Close removes the subscriber. It is idempotent.
func (sub *Subscription) Close() {
	sub.once.Do(func() {
		sub.f.mu.Lock()
		defer sub.f.mu.Unlock()
		delete(sub.f.subs, sub)
	})
}
