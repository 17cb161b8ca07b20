package hub

import (
	"sync"
	"sync/atomic"
	"time"
)

// authCacheTTL is the last bound on how long a token's agent is trusted
// without reading the store. The cache is trusted for as long as every
// change to an agent reaches this process: changes made through it
// (disable, rotate, revoke, a new profile) clear the cache at their
// commit, and so do the changes other processes sharing the store report
// (Agents.AgentChanged) while its listener is connected and hears from the
// server (Agents.ListenerConnected, Agents.ListenerHeard). The TTL bounds
// staleness only if a change bypassed both, so it is long: an agent calls
// every few seconds, and each expiry costs it a read transaction.
const authCacheTTL = 10 * time.Minute

// listenerLease is how long after the listener of a shared store last
// heard from the server (a notification, or the answer to its ping: every
// notification sent before was delivered first) the cache stays trusted. A
// connection gone silent is found out only when a ping goes unanswered,
// seconds later; meanwhile the changes reported on it are missed, so the
// cache would be trusted on a report that cannot come. The listener pings
// well within the lease when nothing else arrives
// (postgres.listenQuiet).
const listenerLease = 2 * time.Second

// authCacheMax bounds the cache's size; past it, the cache starts over.
const authCacheMax = 100_000

// authCache maps token hashes to the enabled agent holding them, so that
// authenticating a call is a map lookup rather than a read transaction.
type authCache struct {
	clock Clock

	mu  sync.Mutex
	m   map[string]authEntry
	gen uint64 // bumped by clear; a put from an older generation is dropped

	misses atomic.Int64 // lookups the cache could not answer: each reads the store

	// off is set while changes made by other processes may go unreported
	// (a store shared by several processes whose listener is not
	// connected): nothing is cached then, since nothing would clear it.
	off bool
	// leased is set on a shared store: the cache is trusted only until
	// heard+listenerLease, heard being when its listener last heard from
	// the server.
	leased bool
	heard  time.Time
}

type authEntry struct {
	agent   Agent // a copy: callers get their own copy of it
	expires time.Time
}

func (c *authCache) get(hash []byte) (*Agent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(hash)]
	if !ok || !c.fresh(e) {
		c.misses.Add(1)
		return nil, false
	}
	a := e.agent
	return &a, true
}

// has reports whether hash is cached and fresh, without copying its agent.
func (c *authCache) has(hash []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(hash)]
	if !ok || !c.fresh(e) {
		c.misses.Add(1)
		return false
	}
	return true
}

// fresh reports whether e may be trusted now: within its TTL and, on a
// shared store, within the listener's lease (c.mu held).
func (c *authCache) fresh(e authEntry) bool {
	now := c.clock.Now()
	return !now.After(e.expires) && !(c.leased && now.After(c.heard.Add(listenerLease)))
}

// generation returns the value to pass to put for a store read starting now.
func (c *authCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches a, read from the store at generation gen; if the cache was
// cleared since, the read may predate a change and is not cached.
func (c *authCache) put(hash []byte, a *Agent, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.off {
		return
	}
	if c.m == nil || len(c.m) >= authCacheMax {
		c.m = make(map[string]authEntry)
	}
	c.m[string(hash)] = authEntry{agent: *a, expires: c.clock.Now().Add(authCacheTTL)}
}

// clear forgets every entry (after a change to any agent's token or state).
func (c *authCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
}

// clearLocked empties the cache and drops the puts of reads begun before
// (c.mu held).
func (c *authCache) clearLocked() {
	c.m = nil
	c.gen++
}

// reported says whether every change made by other processes is reported
// from now on (on) or may be missed (off). Either way the cache is cleared:
// what it holds may predate a change that was missed, and a read begun
// before changes were reported again must not be cached.
func (c *authCache) reported(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.off = !on
	c.heard = c.clock.Now()
}

// heardFrom records that the listener heard from the server now: every
// change reported before has reached the cache.
func (c *authCache) heardFrom() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heard = c.clock.Now()
}
