package hub

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Reachability: which paths can put a message in an agent's context right
// now, computed from what the hub sees, never guessed. The paths are the
// kinds of Via:
//
//   - wait: a WaitForMessages of the agent's own, parked;
//   - channel: hub mcp pushing Claude Code channel notifications, whose
//     long-poll (a wait with via "channel") is parked;
//   - tmux: hub deliver, the sidecar typing into the agent's pane, whose
//     long-poll (a wait with via "tmux") is parked;
//   - hook: a host's hooks, seen when they call (taking the agent's
//     injection, asking whether it may stop, confirming through "hook").
//
// A path is live while it is open (a parked wait) and for a window after
// it was last seen: a wait that ended normally is followed by the next
// one (WaitGrace), the sidecar may be waiting for its pane to go idle
// (TmuxGrace), a host runs its hooks at every step of its agent
// (HookWindow). A wait whose caller went away (the connection closed) and
// a session that ended cleanly (EndSession) close their path at once. An
// agent is reachable when at least one path is live: it can deliver within
// a minute.
//
// Each process keeps the paths of the calls it serves in memory
// (PathTracker), and writes them to the store at each tick (FlushPresence),
// where the other replicas on the same database read them (LoadPaths); a
// row of an open path is written live for pathRefresh and written again
// before that runs out, so a replica that dies stops counting within
// pathRefresh.

// The windows of the paths, after they were last seen.
const (
	// WaitGrace: after a wait (the agent's own, or the channel push's)
	// ended with a reply, the next one is on its way.
	WaitGrace = 5 * time.Second
	// TmuxGrace: after the sidecar's long-poll ended, it may be waiting
	// for its pane to go idle before it pastes and polls again.
	TmuxGrace = time.Minute
	// HookWindow: a host runs its hooks at every prompt and tool use of
	// its agent: one seen this recently will run again soon.
	HookWindow = 5 * time.Minute
	// pathRefresh is how long the stored row of an open path counts as
	// live for the other replicas; it is written again every half of it.
	pathRefresh = 2 * time.Minute
)

// pathWindow is how long path v stays live after it was last seen.
func pathWindow(v Via) time.Duration {
	switch v {
	case ViaTmux:
		return TmuxGrace
	case ViaHook:
		return HookWindow
	}
	return WaitGrace
}

// pathKinds are the paths an agent can be reached by, in the order they
// are shown.
var pathKinds = [...]Via{ViaWait, ViaChannel, ViaHook, ViaTmux}

// PathSeen is one path of an agent as the hub sees it now.
type PathSeen struct {
	Via        Via
	LastSeenAt time.Time // now while open
	Live       bool      // it can deliver within a minute
}

// Reachability is what the hub knows of an agent's paths now.
type Reachability struct {
	Reachable bool       // at least one path is live
	Paths     []PathSeen // the paths seen, live or not, in pathKinds order
	// Since is when a path was last seen (zero: never), for "not
	// reachable since".
	Since time.Time
}

// PathRow is one agent's path as the store keeps it (AgentPathTx).
type PathRow struct {
	AgentID    int64
	Via        Via
	LastSeenAt time.Time
	// LiveUntil is when the path stops counting as live unless seen again.
	LiveUntil time.Time
	// Replica is the process that wrote the row (PathTracker.ID): a
	// process ignores its own rows when it reads them back.
	Replica string
	// WrittenAt is when the store wrote the row, on a clock every process
	// sharing the store agrees on (filled when read: AgentPathTx).
	WrittenAt time.Time
}

// pathState is one path of one agent in a PathTracker.
type pathState struct {
	open  int32     // parked waits of this path in this process
	seen  time.Time // when last seen here (opened, ended, called)
	until time.Time // live until then when not open
	// flushed is the LiveUntil last written for it (zero: never).
	flushed time.Time
	// From the store: the path as another replica (or this hub before a
	// restart) last wrote it.
	otherSeen, otherUntil time.Time
}

// live reports whether p is live at now.
func (p *pathState) live(now time.Time) bool {
	return p.open > 0 || now.Before(p.until) || now.Before(p.otherUntil)
}

// lastSeen returns when p was last seen, now while open.
func (p *pathState) lastSeen(now time.Time) time.Time {
	if p.open > 0 {
		return now
	}
	return later(p.seen, p.otherSeen)
}

type pathEntry struct {
	p     [len(viaNames)]pathState
	dirty bool
}

// PathTracker keeps, in memory, the paths of each agent this process
// serves, and those other processes wrote to the store. Opening or closing
// a path is a map update, not a write: the orchestrator writes the changed
// ones each tick (Flush), as it does presence.
type PathTracker struct {
	id string // this process, in the rows it writes

	mu    sync.Mutex
	m     map[int64]*pathEntry
	dirty []int64            // agents with a path changed since the last Flush, each once
	open  map[int64]struct{} // agents with a path open here
}

// NewPathTracker returns an empty tracker for the process named id.
func NewPathTracker(id string) *PathTracker {
	return &PathTracker{id: id, m: make(map[int64]*pathEntry), open: make(map[int64]struct{})}
}

// entryLocked returns agentID's entry, made if needed; t.mu is held.
func (t *PathTracker) entryLocked(agentID int64) *pathEntry {
	e := t.m[agentID]
	if e == nil {
		e = &pathEntry{}
		t.m[agentID] = e
	}
	return e
}

func (t *PathTracker) markLocked(agentID int64, e *pathEntry) {
	if !e.dirty {
		e.dirty = true
		t.dirty = append(t.dirty, agentID)
	}
}

// Open records a parked wait of agentID's path v at now.
func (t *PathTracker) Open(agentID int64, v Via, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(agentID)
	p := &e.p[v]
	p.open++
	p.seen = later(p.seen, now)
	t.open[agentID] = struct{}{}
	if p.open == 1 {
		t.markLocked(agentID, e)
	}
}

// Close records the end at now of a parked wait of agentID's path v: the
// path stays live for its window (pathWindow) when the wait ended with a
// reply, and not at all when its caller went away (gone).
func (t *PathTracker) Close(agentID int64, v Via, now time.Time, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[agentID]
	if e == nil || e.p[v].open == 0 {
		return
	}
	p := &e.p[v]
	p.open--
	p.seen = later(p.seen, now)
	if p.open == 0 {
		p.until = now.Add(pathWindow(v))
		if gone {
			p.until = now
		}
		t.markLocked(agentID, e)
		t.dropOpenLocked(agentID, e)
	}
}

// dropOpenLocked forgets agentID among the agents with an open path when
// none is left open.
func (t *PathTracker) dropOpenLocked(agentID int64, e *pathEntry) {
	for i := range e.p {
		if e.p[i].open > 0 {
			return
		}
	}
	delete(t.open, agentID)
}

// Seen records that agentID's path v was seen at now (a hook's call, a
// confirmed delivery): it is live for its window.
func (t *PathTracker) Seen(agentID int64, v Via, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(agentID)
	p := &e.p[v]
	p.seen = later(p.seen, now)
	w := pathWindow(v)
	p.until = later(p.until, now.Add(w))
	// Written again only when the written row runs out within half its
	// window: a hook calling at every step of its agent costs a write per
	// half window, not one per call.
	if p.flushed.Sub(now) < w/2 {
		t.markLocked(agentID, e)
	}
}

// End records that agentID's session on path v ended cleanly at now: the
// path stops counting as live at once, here and, once flushed, on the
// other replicas. Its parked waits, if any, still count while parked.
func (t *PathTracker) End(agentID int64, v Via, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[agentID]
	if e == nil {
		return
	}
	p := &e.p[v]
	p.seen = later(p.seen, now)
	p.until, p.otherUntil = now, time.Time{}
	t.markLocked(agentID, e)
}

// Reach returns what the tracker knows of agentID's paths at now.
func (t *PathTracker) Reach(agentID int64, now time.Time) Reachability {
	t.mu.Lock()
	defer t.mu.Unlock()
	var r Reachability
	e := t.m[agentID]
	if e == nil {
		return r
	}
	for _, v := range pathKinds {
		p := &e.p[v]
		seen := p.lastSeen(now)
		if seen.IsZero() {
			continue
		}
		live := p.live(now)
		r.Paths = append(r.Paths, PathSeen{Via: v, LastSeenAt: seen, Live: live})
		r.Reachable = r.Reachable || live
		r.Since = later(r.Since, seen)
	}
	return r
}

// Reachable reports whether a live path reaches agentID at now (Reach's
// Reachable, without the paths).
func (t *PathTracker) Reachable(agentID int64, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[agentID]
	if e == nil {
		return false
	}
	for _, v := range pathKinds {
		if e.p[v].live(now) {
			return true
		}
	}
	return false
}

// Flush returns the rows to write at now: the paths changed since the last
// Flush, and the open ones whose written row runs out within half of
// pathRefresh. They count as written (Unflush if the write fails).
func (t *PathTracker) Flush(now time.Time) []PathRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.open {
		e := t.m[id]
		for i := range e.p {
			if p := &e.p[i]; p.open > 0 && p.flushed.Sub(now) < pathRefresh/2 {
				t.markLocked(id, e)
				break
			}
		}
	}
	var out []PathRow
	for _, id := range t.dirty {
		e := t.m[id]
		if e == nil || !e.dirty {
			continue
		}
		e.dirty = false
		for _, v := range pathKinds {
			p := &e.p[v]
			if p.seen.IsZero() {
				continue
			}
			until := p.until
			if p.open > 0 {
				until = now.Add(pathRefresh)
			}
			if until.Equal(p.flushed) && p.open == 0 {
				continue // written as it is
			}
			p.flushed = until
			out = append(out, PathRow{AgentID: id, Via: v, LastSeenAt: p.lastSeen(now), LiveUntil: until, Replica: t.id})
		}
	}
	t.dirty = t.dirty[:0]
	return out
}

// Unflush marks the agents of rows changed again (their write failed).
func (t *PathTracker) Unflush(rows []PathRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range rows {
		if e := t.m[r.AgentID]; e != nil {
			e.p[r.Via].flushed = time.Time{}
			t.markLocked(r.AgentID, e)
		}
	}
}

// Load takes in rows read from the store: the paths other processes wrote
// (its own rows, which say nothing new, are skipped).
func (t *PathTracker) Load(rows []PathRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range rows {
		if r.Replica == t.id || int(r.Via) >= len(viaNames) || r.Via == 0 {
			continue
		}
		p := &t.entryLocked(r.AgentID).p[r.Via]
		p.otherSeen = later(p.otherSeen, r.LastSeenAt)
		p.otherUntil = r.LiveUntil
	}
}

// Forget drops agentID's paths (the agent was deleted).
func (t *PathTracker) Forget(agentID int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, agentID)
	delete(t.open, agentID)
}

// newReplicaID names this process in the path rows it writes: random, so
// that a restarted hub reads its predecessor's rows as another's.
func newReplicaID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Unreachable is a recipient a post named that no live path reaches now.
type Unreachable struct {
	Name  string
	Since time.Time // when one of its paths was last seen; zero: never
}

// UnreachableNote says in one line, in language l with clock times in
// loc, that a message is stored for recipients us and when they get it.
// It is empty when us is.
func UnreachableNote(us []Unreachable, l Locale, loc *time.Location, now time.Time) string {
	if len(us) == 0 {
		return ""
	}
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.Name + " (" + unreachableSince(u.Since, l, loc, now) + ")"
	}
	if l == LocaleJA {
		return "今届く経路のない宛先に保存しました: " + strings.Join(parts, "、") + "。次の wait、read またはセッションで届きます。"
	}
	if len(us) == 1 {
		return fmt.Sprintf("Stored for %s: %s; %s gets it at its next wait, read or session.", us[0].Name, unreachableSince(us[0].Since, l, loc, now), us[0].Name)
	}
	return "Stored for " + strings.Join(parts, ", ") + ": each gets it at its next wait, read or session."
}

// unreachableSince says since when a recipient has had no live path.
func unreachableSince(since time.Time, l Locale, loc *time.Location, now time.Time) string {
	if loc == nil {
		loc = time.Local
	}
	at := since.In(loc)
	layout := "15:04"
	if y, m, d := at.Date(); y != now.In(loc).Year() || m != now.In(loc).Month() || d != now.In(loc).Day() {
		layout = "Jan 2 15:04"
		if l == LocaleJA {
			layout = "1月2日 15:04"
		}
	}
	switch {
	case since.IsZero() && l == LocaleJA:
		return "まだ一度も接続していません"
	case since.IsZero():
		return "never connected yet"
	case l == LocaleJA:
		return at.Format(layout) + " から届く経路なし"
	}
	return "no live path since " + at.Format(layout)
}
