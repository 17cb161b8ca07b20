package hub

import (
	"sync"
	"time"
)

// PresenceState says how an agent is connected right now (SPEC §4).
type PresenceState string

// DecidePresence returns the presence of an agent whose last call was at
// lastCallAt (zero: never) with parkedWaits calls parked in WaitForMessages.
// A parked wait means waiting whatever the time; otherwise active below
// cfg.IdleAfter, idle below cfg.OfflineAfter, offline from then.
func DecidePresence(lastCallAt time.Time, parkedWaits int, now time.Time, cfg HealthConfig) PresenceState {
	switch {
	case parkedWaits > 0:
		return PresenceWaiting
	case lastCallAt.IsZero():
		return PresenceOffline
	}
	switch since := now.Sub(lastCallAt); {
	case since >= cfg.OfflineAfter:
		return PresenceOffline
	case since >= cfg.IdleAfter:
		return PresenceIdle
	}
	return PresenceActive
}

// SessionEnded reports whether an agent whose last call was at lastCallAt
// ended its session cleanly at endedAt (EndSession) and has not called
// since: it is then offline at once, unless a wait of its is parked.
func SessionEnded(lastCallAt, endedAt time.Time) bool {
	return !endedAt.IsZero() && !lastCallAt.After(endedAt)
}

// PresenceTracker keeps, in memory, when each agent last made a call and at
// which beat. Recording a call is a map update, not a write: the orchestrator
// flushes the changed entries to the store each tick (Flush), so a crash
// loses at most one tick of last-seen times, never an acknowledged write.
type PresenceTracker struct {
	mu sync.Mutex
	m  map[int64]*presenceEntry
	// dirty lists the agents whose entry is dirty, each once (an agent
	// forgotten meanwhile may stay listed), so that Flush looks at the
	// callers of one tick and not at every agent seen since start-up.
	dirty []int64
}

type presenceEntry struct {
	name, project string // whom status lists show it to (names never change)
	lastCall      time.Time
	beat          int64
	ended         time.Time // when its session last ended cleanly (EndSession)
	dirty         bool
}

// NewPresenceTracker returns an empty tracker.
func NewPresenceTracker() *PresenceTracker {
	return &PresenceTracker{m: make(map[int64]*presenceEntry)}
}

// Touch records a call by agent a at now during beat, and returns the
// call before it as LastCall would have (one lock and one lookup for both:
// every call the hub admits touches).
func (p *PresenceTracker) Touch(a *Agent, now time.Time, beat int64) (prevCall time.Time, prevBeat int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	agentID := a.ID
	e := p.m[agentID]
	if e == nil {
		e = &presenceEntry{name: a.Name, project: ProjectOr(a.Project)}
		p.m[agentID] = e
	}
	prevCall, prevBeat = e.lastCall, e.beat
	if now.After(e.lastCall) {
		e.lastCall = now
	}
	e.beat = max(e.beat, beat)
	p.markDirty(agentID, e)
	return prevCall, prevBeat
}

// markDirty marks e, the entry of agentID, dirty; p.mu is held.
func (p *PresenceTracker) markDirty(agentID int64, e *presenceEntry) {
	if !e.dirty {
		e.dirty = true
		p.dirty = append(p.dirty, agentID)
	}
}

// End records that agent a's session ended cleanly at now: it shows
// offline until its next call (SessionEnded).
func (p *PresenceTracker) End(a *Agent, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[a.ID]
	if e == nil {
		e = &presenceEntry{name: a.Name, project: ProjectOr(a.Project)}
		p.m[a.ID] = e
	}
	if now.After(e.ended) {
		e.ended = now
	}
	p.markDirty(a.ID, e)
}

// Ended returns when agentID's session last ended cleanly (zero: not
// since start, and not seeded).
func (p *PresenceTracker) Ended(agentID int64) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[agentID]; e != nil {
		return e.ended
	}
	return time.Time{}
}

// Seed loads a's stored last-seen time, beat and session end (at
// start-up), without marking it dirty.
func (p *PresenceTracker) Seed(a *Agent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.m[a.ID]; !ok && !a.LastSeenAt.IsZero() {
		p.m[a.ID] = &presenceEntry{name: a.Name, project: ProjectOr(a.Project), lastCall: a.LastSeenAt, beat: a.LastInteractionBeat, ended: a.SessionEndedAt}
	}
}

// LastCall returns when agentID last made a call (zero if never since start
// and not seeded) and at which beat.
func (p *PresenceTracker) LastCall(agentID int64) (time.Time, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[agentID]; e != nil {
		return e.lastCall, e.beat
	}
	return time.Time{}, 0
}

// Flush returns the entries changed since the last Flush and marks them clean.
func (p *PresenceTracker) Flush() []Touch {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Touch, 0, len(p.dirty))
	for _, id := range p.dirty {
		if e := p.m[id]; e != nil && e.dirty {
			out = append(out, Touch{AgentID: id, LastSeenAt: e.lastCall, LastInteractionBeat: e.beat, SessionEndedAt: e.ended})
			e.dirty = false
		}
	}
	p.dirty = p.dirty[:0]
	return out
}

// Unflush marks touches dirty again (their flush failed).
func (p *PresenceTracker) Unflush(ts []Touch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range ts {
		if e := p.m[t.AgentID]; e != nil {
			p.markDirty(t.AgentID, e)
		}
	}
}

// Touch is one agent's flushed presence: see PresenceTracker.Flush.
type Touch struct {
	AgentID             int64
	LastSeenAt          time.Time
	LastInteractionBeat int64
	SessionEndedAt      time.Time // zero: its session has not ended cleanly
}

// Forget drops agentID's entry, flushed or not (the agent was deleted).
func (p *PresenceTracker) Forget(agentID int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, agentID)
}

// shownPresence is what a live view last showed of an agent's presence:
// its state, its interaction beat (since_last is counted from it) and
// whether a live path reached it.
type shownPresence struct {
	state     PresenceState
	beat      int64
	reachable bool
}

// moved returns the agents whose presence (from their last call, and
// whether parked holds them) or interaction beat differs from what shown
// holds, and records the new values in shown; agents forgotten since are
// dropped from it. With record set it only fills shown (a first scan: a
// live view that has just read everything).
func (p *PresenceTracker) moved(shown map[int64]shownPresence, parked map[int64]bool, reachable func(id int64) bool, now time.Time, cfg HealthConfig, record bool) []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int64
	for id, e := range p.m {
		n := 0
		if parked[id] {
			n = 1
		}
		v := shownPresence{state: DecidePresence(e.lastCall, n, now, cfg), beat: e.beat, reachable: reachable(id)}
		if old, ok := shown[id]; ok && old == v {
			continue
		}
		shown[id] = v
		if !record {
			out = append(out, id)
		}
	}
	if len(shown) > len(p.m) {
		for id := range shown {
			if _, ok := p.m[id]; !ok {
				delete(shown, id)
			}
		}
	}
	return out
}
