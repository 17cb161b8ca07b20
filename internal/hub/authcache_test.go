package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// Authentication caches agents by token; a change made through the service
// must take effect on the very next call, not after the cache's TTL.
func TestAuthCacheFollowsChangesAtOnce(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	a, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "cached"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second call is served from the cache
		got, err := h.Authenticate(ctx, token)
		if err != nil || got.ID != a.ID {
			t.Fatalf("Authenticate #%d = %v, %v; want agent %d", i, got, err, a.ID)
		}
	}

	if _, err := h.SetAgentDisabled(ctx, "cached", true); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(ctx, token); hub.ErrorCode(err) != hub.EPERMISSION {
		t.Fatalf("after disable: err = %v, want %s", err, hub.EPERMISSION)
	}
	if _, err := h.SetAgentDisabled(ctx, "cached", false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatalf("after enable: %v", err)
	}

	_, newToken, err := h.RotateToken(ctx, "cached", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(ctx, token); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
		t.Fatalf("old token after rotate: err = %v, want %s", err, hub.EUNAUTHORIZED)
	}
	if _, err := h.Authenticate(ctx, newToken); err != nil {
		t.Fatalf("new token after rotate: %v", err)
	}
	// The tap's check (KnownToken) follows the same cache.
	for i := 0; i < 2; i++ {
		if !known(t, h, newToken) || known(t, h, token) {
			t.Fatalf("KnownToken #%d after rotate: new %v, old %v; want true, false", i, known(t, h, newToken), known(t, h, token))
		}
	}
	if _, _, err := h.RotateToken(ctx, "cached", true); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(ctx, newToken); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
		t.Fatalf("token after revoke: err = %v, want %s", err, hub.EUNAUTHORIZED)
	}
	if known(t, h, newToken) {
		t.Fatal("KnownToken after revoke = true, want false")
	}
}

// The check made on a call's headers (KnownToken) caches the agent it reads,
// so that the call's full check reads nothing more; a disabled agent's
// token is known but not cached, and the full check still refuses it.
func TestKnownTokenFillsTheAuthCache(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	a, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "tapped"})
	if err != nil {
		t.Fatal(err)
	}
	_, offToken, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetAgentDisabled(ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	if !known(t, h, offToken) {
		t.Fatal("a disabled agent's token is unknown to KnownToken, want known (the full check says why)")
	}
	if _, err := h.Authenticate(ctx, offToken); hub.ErrorCode(err) != hub.EPERMISSION {
		t.Fatalf("disabled agent after KnownToken: err = %v, want %s", err, hub.EPERMISSION)
	}
	if known(t, h, "ahk_nobody") {
		t.Fatal("an unknown token is known")
	}

	if !known(t, h, token) {
		t.Fatal("the agent's token is unknown")
	}
	// With the store closed, only the cache can answer.
	if err := h.DB.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := h.Authenticate(ctx, token)
	if err != nil || got.ID != a.ID {
		t.Fatalf("Authenticate after KnownToken, store closed = %v, %v; want agent %d from the cache", got, err, a.ID)
	}
	// A token the cache does not hold cannot be judged then: an error, not
	// "unknown" (which a client would read as revoked).
	if ok, err := h.KnownToken(ctx, offToken); ok || err == nil {
		t.Fatalf("KnownToken with the store closed = %v, %v; want false and an error", ok, err)
	}
	if _, err := h.Authenticate(ctx, offToken); err == nil || hub.ErrorCode(err) == hub.EUNAUTHORIZED {
		t.Fatalf("Authenticate with the store closed: err = %v, want a store error, not %s", err, hub.EUNAUTHORIZED)
	}
}

// known is KnownToken for a store that answers.
func known(t *testing.T, h *testHub, token string) bool {
	t.Helper()
	ok, err := h.KnownToken(context.Background(), token)
	if err != nil {
		t.Fatalf("KnownToken: %v", err)
	}
	return ok
}

// The cached agent is a copy: what one call does to its *Agent cannot leak
// into the next call's.
func TestAuthCacheReturnsCopies(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	_, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "copies"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := h.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	first.Name = "tampered"
	second, err := h.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if second.Name != "copies" {
		t.Errorf("second call's agent name = %q, want %q", second.Name, "copies")
	}
}

// TestAuthCacheExpiresOnTheHubsClock: a token changed in the store behind
// the service's back (a change no commit of this process recorded and no
// listener reported) is trusted from the cache until the hub's clock
// passes the cache's TTL, its last bound, then refused.
func TestAuthCacheExpiresOnTheHubsClock(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	a, token := h.agent(t, "cached")
	if err := h.DB.Update(ctx, func(tx hub.Tx) error { return tx.SetAgentToken(a.ID, nil) }); err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(9 * time.Minute)
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatalf("9 minutes on, within the TTL: %v, want the cached agent", err)
	}
	h.Clock.Advance(time.Minute + time.Second)
	if _, err := h.Authenticate(ctx, token); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
		t.Fatalf("past the TTL: %v, want %s (the store was read again)", err, hub.EUNAUTHORIZED)
	}
}

// Each check the cache cannot answer reads the store and is counted
// (AuthCacheMisses, /metrics' hub_auth_cache_misses_total); a cached
// token's checks are not.
func TestAuthCacheCountsMisses(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	_, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "counted"})
	if err != nil {
		t.Fatal(err)
	}
	before := h.AuthCacheMisses()
	if !known(t, h, token) { // a miss: it reads the store and caches the agent
		t.Fatal("the agent's token is unknown")
	}
	for range 3 {
		if _, err := h.Authenticate(ctx, token); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.AuthCacheMisses() - before; got != 1 {
		t.Fatalf("misses after KnownToken and 3 Authenticate = %d, want 1", got)
	}
	if _, err := h.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "counted", Role: new("reader")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if got := h.AuthCacheMisses() - before; got != 2 {
		t.Fatalf("misses after a change to the agent = %d, want 2", got)
	}
}

// On a store other processes share, authentication trusts its cache only
// while their changes are reported (the listener is connected): before the
// listener first connects and from the moment it loses its connection,
// every call reads the store, so a change made elsewhere is seen at once;
// while it is connected and hears from the server, the cached agent is
// trusted for minutes, since a reported change would clear it. Changes are made behind the service's
// back, where nothing reports them, so that what a call is told shows
// whether it read the store.
func TestAuthCacheTrustedWhileTheListenerIsConnected(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, func(c *hub.Config) { c.SharedStore = true })
	ctx := context.Background()
	a, token := h.agent(t, "shared")
	setToken := func(hash []byte) {
		t.Helper()
		if err := h.DB.Update(ctx, func(tx hub.Tx) error { return tx.SetAgentToken(a.ID, hash) }); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func(when string) {
		t.Helper()
		if _, err := h.Authenticate(ctx, token); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
			t.Fatalf("%s: %v, want %s (read from the store)", when, err, hub.EUNAUTHORIZED)
		}
		if known(t, h, token) {
			t.Fatalf("%s: KnownToken = true, want false (read from the store)", when)
		}
	}

	// Not listening yet: h.agent authenticated, yet nothing was cached.
	setToken(nil)
	revoked("before the listener connected")

	setToken(hub.HashToken(token))
	h.ListenerConnected(true)
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	setToken(nil)
	for range 5 { // the listener hears from the server (notifications, pings)
		h.Clock.Advance(time.Minute)
		h.ListenerHeard()
	}
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatalf("listening, 5 minutes after the agent was cached: %v, want the cached agent", err)
	}
	if !known(t, h, token) {
		t.Fatal("listening: KnownToken = false, want true from the cache")
	}
	// Heard nothing for longer than the lease: the connection may have
	// gone silent, and what it would report may be held back.
	h.Clock.Advance(3 * time.Second)
	revoked("3 s after the listener last heard from the server")

	h.ListenerConnected(false) // the cached agent is forgotten at once
	revoked("the moment the listener lost its connection")
	setToken(hub.HashToken(token))
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	setToken(nil)
	revoked("while the listener is disconnected")

	setToken(hub.HashToken(token))
	h.ListenerConnected(true) // caching again
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	setToken(nil)
	if _, err := h.Authenticate(ctx, token); err != nil {
		t.Fatalf("listening again: %v, want the cached agent", err)
	}
}
