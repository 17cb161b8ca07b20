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
type Feed struct {
	max int

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscription is one subscriber. Close it when the subscriber leaves.
type Subscription struct {
	f       *Feed
	c       chan struct{}
	pending Topics // guarded by f.mu
	once    sync.Once
}

// defaultFeedSubscribers bounds the feed's subscribers when none is given.
const defaultFeedSubscribers = 64

// NewFeed returns a feed that holds at most max subscribers.
func NewFeed(max int) *Feed {
	if max <= 0 {
		max = defaultFeedSubscribers
	}
	return &Feed{max: max, subs: make(map[*Subscription]struct{})}
}

// Subscribe adds a subscriber. Errors: EEXHAUSTED past the limit.
func (f *Feed) Subscribe() (*Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) >= f.max {
		return nil, Errorf(EEXHAUSTED, "the hub already streams changes to %d pages (its limit): close a dashboard tab and retry", f.max)
	}
	sub := &Subscription{f: f, c: make(chan struct{}, 1)}
	f.subs[sub] = struct{}{}
	return sub, nil
}

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
