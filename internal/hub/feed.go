package hub

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

// Feed broadcasts changes to the change streams (the dashboard's live
// stream), which the hub's registry of parked callers holds (park.go).
// Publishing never blocks: a subscriber that has not read yet sees the
// topics merged into one pending set.
//
// While anyone subscribes, the feed also gathers which agents' overviews
// may have changed (AgentsChanged, AgentNamed), for the one OverviewWatch
// that turns them into the rows the stream sends; with no subscriber,
// gathering costs nothing.
type Feed struct {
	ws      *Waiters
	changes agentChanges  // guarded by ws.mu
	changed chan struct{} // signalled when a change is gathered
}

// agentChanges is what the feed gathered of agents' changes since the
// last OverviewWatch.Next.
type agentChanges struct {
	ids   map[int64]struct{}
	names map[string]struct{}
	all   bool
}

// Subscription is one change stream. Close it when the subscriber leaves.
type Subscription struct {
	ws      *Waiters
	c       chan struct{}
	inbox   chan struct{} // signalled on inbox changes only (Inbox)
	owner   Principal
	done    chan struct{} // closed when the stream must end
	ended   bool          // guarded by ws.mu
	pending Topics        // guarded by ws.mu
}

func newFeed(ws *Waiters) *Feed {
	return &Feed{ws: ws, changes: agentChanges{ids: map[int64]struct{}{}, names: map[string]struct{}{}}, changed: make(chan struct{}, 1)}
}

// Epoch returns the registry's revocation epoch (Waiters.Epoch): read it
// before checking the token of the stream's principal.
func (f *Feed) Epoch() uint64 { return f.ws.Epoch() }

// Subscribe adds a change stream held by who (the admin: the zero
// Principal) authenticated at revocation epoch epoch, within the limits of
// park.go. Errors: EEXHAUSTED past a limit, EUNAUTHORIZED when who was
// revoked since epoch.
func (f *Feed) Subscribe(who Principal, epoch uint64) (*Subscription, error) {
	ws := f.ws
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.revokedAt[who] > epoch {
		return nil, errRevoked()
	}
	if err := ws.admitLocked(who, parkStream); err != nil {
		return nil, err
	}
	sub := &Subscription{ws: ws, c: make(chan struct{}, 1), inbox: make(chan struct{}, 1), owner: who, done: make(chan struct{})}
	ws.streams[sub] = struct{}{}
	if ws.stopped {
		ws.endStreamLocked(sub)
	}
	return sub, nil
}

// endStreamLocked ends sub: its Done channel closes, it hears no more
// changes and its place is free.
func (ws *Waiters) endStreamLocked(sub *Subscription) {
	if sub.ended {
		return
	}
	sub.ended = true
	close(sub.done)
	delete(ws.streams, sub)
	ws.releaseLocked(sub.owner, parkStream)
}

// Done is closed when the stream must end: its principal was revoked, or
// the hub stops.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Publish announces topic to every subscriber.
func (f *Feed) Publish(topic Topic) {
	if f == nil {
		return
	}
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	f.ws.publishLocked(topic)
}

func (ws *Waiters) publishLocked(topic Topic) {
	for sub := range ws.streams {
		sub.pending |= Topics(topic)
		select {
		case sub.c <- struct{}{}:
		default: // already signalled; the topic joined the pending set
		}
		if topic == TopicInbox {
			select {
			case sub.inbox <- struct{}{}:
			default:
			}
		}
	}
}

// AgentsChanged notes that the overviews of the agents ids may have
// changed (a delivery, a call of theirs).
func (f *Feed) AgentsChanged(ids ...int64) {
	if f == nil || len(ids) == 0 {
		return
	}
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	f.agentsChangedLocked(ids)
}

func (f *Feed) agentsChangedLocked(ids []int64) {
	if len(f.ws.streams) == 0 {
		return
	}
	for _, id := range ids {
		f.changes.ids[id] = struct{}{}
	}
	f.signal()
}

// AgentNamed notes that the overview of the agent named name may have
// changed, or that the agent is gone (an admin call naming it).
func (f *Feed) AgentNamed(name string) {
	if f == nil {
		return
	}
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	if len(f.ws.streams) == 0 {
		return
	}
	f.changes.names[name] = struct{}{}
	f.signal()
}

// AllAgentsChanged notes that any overview may have changed (messages
// pruned, for one).
func (f *Feed) AllAgentsChanged() {
	if f == nil {
		return
	}
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	if len(f.ws.streams) > 0 {
		f.changes.all = true
		f.signal()
	}
}

func (f *Feed) signal() {
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
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	for id := range f.changes.ids {
		ids = append(ids, id)
	}
	for n := range f.changes.names {
		names = append(names, n)
	}
	all = f.changes.all
	clear(f.changes.ids)
	clear(f.changes.names)
	f.changes.all = false
	return ids, names, all
}

// Count returns the number of change streams.
func (f *Feed) Count() int {
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	return len(f.ws.streams)
}

// C receives a value when topics are pending; read them with Take.
func (sub *Subscription) C() <-chan struct{} { return sub.c }

// Inbox receives a value when an inbox change was published (C receives
// one too): a subscriber that holds the other changes for a while listens
// to it alone meanwhile, and is not woken by every change it holds.
func (sub *Subscription) Inbox() <-chan struct{} { return sub.inbox }

// Take returns the pending topics and clears them.
func (sub *Subscription) Take() Topics {
	sub.ws.mu.Lock()
	defer sub.ws.mu.Unlock()
	t := sub.pending
	sub.pending = 0
	return t
}

// Close removes the subscriber. It is idempotent.
func (sub *Subscription) Close() {
	sub.ws.mu.Lock()
	defer sub.ws.mu.Unlock()
	sub.ws.endStreamLocked(sub)
}
