package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// Replica B trusts the agents it cached for authentication while its
// listener is connected, and forgets them the moment the listener loses
// its connection, before it connects again: a token revoked meanwhile
// (the notification lost) is refused at once, not when the cache expires.
// The revocation is written behind every hub's back (no notification at
// all), so that what B says shows whether it read the store.
func TestWatchLostConnectionForgetsCachedAgents(t *testing.T) {
	t.Parallel()
	a, b, role := replicasWithRole(t)
	schema := a.db.schema
	listener := "hub listen " + schema
	eventually(t, "B listening", func() bool { return backends(t, listener) == 1 })
	ctx := context.Background()
	_, token, err := b.svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Agents.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, `UPDATE `+schema+`.agents SET token_hash = NULL WHERE name = 'bob'`)
	if _, err := b.svc.Agents.Authenticate(ctx, token); err != nil {
		t.Fatalf("listening: %v, want bob from B's cache", err)
	}
	// Quiet for longer than the lease each answer gives: the listener's
	// pings keep the cache trusted.
	time.Sleep(3 * time.Second)
	if _, err := b.svc.Agents.Authenticate(ctx, token); err != nil {
		t.Fatalf("listening, quiet for 3 s: %v, want bob from B's cache", err)
	}

	// B may not log in while its listener is down: it stays disconnected.
	pgtest.Exec(t, `ALTER ROLE `+role+` NOLOGIN`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '`+listener+`'`)
	defer pgtest.Exec(t, `ALTER ROLE `+role+` LOGIN`)
	eventually(t, "B's listener gone", func() bool { return strings.Contains(b.log.String(), "lost the connection that listens") })
	if _, err := b.svc.Agents.Authenticate(ctx, token); hub.ErrorCode(err) != hub.EUNAUTHORIZED {
		t.Fatalf("listener disconnected: %v, want %s read from the store", err, hub.EUNAUTHORIZED)
	}
}

// A profile changed on replica A (here, the role that next_task matches
// against) reaches the agents replica B cached for authentication: the
// change is notified like a disable, not left to the cache's expiry.
func TestWatchReportsProfileChanges(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a, b := newReplica(t, u, false), newReplica(t, u, true)
	eventually(t, "B listening", func() bool { return backends(t, "hub listen "+a.db.schema) == 1 })
	ctx := context.Background()
	_, token, err := b.svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.svc.Agents.Authenticate(ctx, token); err != nil || got.Role != "" {
		t.Fatalf("Authenticate = %v, %v; want bob with no role", got, err)
	}
	role := "reviewer"
	if _, err := a.svc.Agents.UpdateAgent(ctx, hub.UpdateAgentRequest{Name: "bob", Role: &role}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := b.svc.Agents.Authenticate(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if got.Role == role {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after A changed bob's role, B authenticates bob with role %q, want %q", got.Role, role)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
