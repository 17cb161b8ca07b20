package mcpbridge

import (
	"fmt"
	"sync"
	"time"

	"github.com/agenthub/hub/internal/hooksock"
)

// hookRefresh is how long the bridge answers its agent's hooks without
// sending one to the hub: the hub counts the hook path live for
// hub.HookWindow (5 minutes) after it last saw a hook, so one hook in this
// long keeps the path live for the hub, and the people watching it.
const hookRefresh = 2 * time.Minute

// watchStale is how long a parked watch of the hub counts as live: the
// push loop's long-poll returns within pushPoll, so one silent for longer
// is on a connection that is gone.
const watchStale = pushPoll + waitGrace

// known is what the bridge knows of its agent at the hub, for answering the
// agent's hooks (hooksock) without the hub. The watch of the agent's
// messages (the push loop's long-poll, watch) feeds it; the hooks it sends
// to the hub and that come back synced (answer) clear it.
//
// A hook with nothing new is answered here when the watch is parked at the
// hub after every message it was handed (the hub wakes it on anything new
// for the agent: messages, nudges, pulses, notices), heard from the hub
// within watchStale on a connection that is up, and nothing happened since
// the last hook that went through the hub (seq == synced): no message
// arrived, no event of the host (a stop, a notification, a permission
// request, which may leave the agent marked waiting for a person or an
// approval open, that only the hub closes), no failed watch. Anything else
// sends the hook to the hub, as without a bridge.
type known struct {
	now   func() time.Time
	ready func() bool // the connection to the hub is up

	mu       sync.Mutex
	cursor   string    // the newest message the watch was handed
	started  bool      // a watch has ended: cursor is where the hub put it
	watching bool      // the watch is parked at the hub after cursor
	freshAt  time.Time // when the hub last confirmed cursor: the watch parked
	seq      uint64    // counts what the hooks have not seen through the hub
	synced   uint64    // seq when a hook last came back from the hub
	syncedAt time.Time // and when
}

func newKnown(now func() time.Time, ready func() bool) *known {
	return &known{now: now, ready: ready, seq: 1}
}

// watch is the one point that feeds k from the hub: the watch parks after
// cursor; the returned function takes its end, with the cursor past what
// it was handed (n messages) or its error.
func (k *known) watch(cursor string) func(n int, next string, err error) {
	if k == nil {
		return func(int, string, error) {}
	}
	k.mu.Lock()
	k.cursor, k.watching, k.freshAt = cursor, true, k.now()
	k.mu.Unlock()
	return func(n int, next string, err error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.watching = false
		// A moved cursor with nothing handed out is what the hub passed
		// over (a watch stream's frames carry nothing else), and the first
		// watch only places it: an agent that never read a message has
		// no cursor until its first message moves it.
		if err != nil || n > 0 || (k.started && next != "" && next != k.cursor) {
			k.seq++
		}
		k.started = k.started || err == nil
	}
}

// answer answers one hook run (hooksock.Serve): quiet when nothing is new,
// else to the hub, with what to run once the hub has answered that hook.
func (k *known) answer(q hooksock.Query) (hooksock.Reply, func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	seq := k.seq
	synced := func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if seq >= k.synced {
			k.synced, k.syncedAt = seq, k.now()
		}
	}
	var why string
	switch {
	case q.Step != hooksock.StepInject:
		// The hub decides (a stop, an approval), and what it records
		// (waiting for a person, an open approval) only a hook that
		// reaches it clears: the next one goes there too, and so does
		// one that came back from the hub before the hub recorded this.
		k.seq++
		again := func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.seq++
		}
		return hooksock.Reply{Answer: hooksock.AnswerHub, Why: fmt.Sprintf("%s is the hub's to answer", q.Event)}, again
	case !k.watching:
		why = "the bridge does not follow the agent's messages now (no channel push, or between two polls)"
	case now.Sub(k.freshAt) > watchStale:
		why = fmt.Sprintf("the bridge last heard from the hub %v ago", now.Sub(k.freshAt).Round(time.Second))
	case !k.ready():
		why = "the bridge's connection to the hub is not up"
	case k.synced != k.seq:
		why = "something happened since the last hook the hub answered"
	case now.Sub(k.syncedAt) >= hookRefresh:
		why = "the hub has not seen a hook of this agent for a while"
	default:
		return hooksock.Reply{Answer: hooksock.AnswerQuiet}, nil
	}
	return hooksock.Reply{Answer: hooksock.AnswerHub, Why: why}, synced
}

// serveHooks answers the agent's hooks at path until the returned function
// runs, which closes the socket and removes its file. A socket it cannot
// open is logged: the hooks then ask the hub.
func (b *bridge) serveHooks(path, token string) (stop func()) {
	ln, err := hooksock.Listen(path)
	if err != nil {
		b.opts.Logger.Warn("hooks: no local socket; the agent's hooks ask the hub", "err", err)
		return func() {}
	}
	b.opts.Logger.Info("hooks: the agent's hooks ask this bridge first", "socket", path)
	logger := b.opts.Logger
	done := make(chan struct{})
	go func() {
		defer close(done)
		hooksock.Serve(ln, token, func(q hooksock.Query) (hooksock.Reply, func()) {
			rep, synced := b.known.answer(q)
			logger.Debug("hooks: answered", "event", q.Event, "answer", rep.Answer, "why", rep.Why)
			return rep, synced
		}, logger)
	}()
	return func() { ln.Close(); <-done }
}
