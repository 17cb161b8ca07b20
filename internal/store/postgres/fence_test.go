package postgres

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// The orchestrator's writes (hub.LeaderWork) are made only while the
// replica's leader session holds the lock: a replica that does not lead,
// or whose leader session ended behind its back (as the server ends a
// silent one), writes nothing of them; its other writes go on. The fault
// rig saw a leader isolated from the database finish a 27 s tick after
// the network came back, 20 s after another replica had taken over.
func TestLeaderWritesAreFenced(t *testing.T) {
	u := pgtest.Schema(t)
	a, b := openTest(t, u), openTest(t, u)
	ctx := context.Background()
	write := func(db *DB, c context.Context, name string) error {
		return db.Update(c, func(tx hub.Tx) error {
			return tx.CreateAgent(&hub.Agent{Name: name, CreatedAt: time.Unix(1, 0)}, nil)
		})
	}
	leaderWork := hub.LeaderWork(ctx)
	if lead, err := a.Leader().Lead(ctx); !lead || err != nil {
		t.Fatalf("a.Lead = %v, %v", lead, err)
	}
	if err := write(a, leaderWork, "by-a-leading"); err != nil {
		t.Fatalf("the leader's write: %v", err)
	}
	if err := write(b, leaderWork, "by-b-not-leading"); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("leader work on a replica that does not lead: %v, want %s", err, hub.EPRECONDITION)
	}

	// The session ends (the call waits up to 5 s for it: PostgreSQL 14+).
	pid := a.Leader().fence.Load().pid
	pgtest.Exec(t, "SELECT pg_terminate_backend("+strconv.Itoa(int(pid))+", 5000)")
	if err := write(a, leaderWork, "by-a-after-its-session-ended"); hub.ErrorCode(err) != hub.EPRECONDITION {
		t.Errorf("leader work after the leader session ended: %v, want %s", err, hub.EPRECONDITION)
	}
	if err := write(a, ctx, "by-a-other-work"); err != nil {
		t.Errorf("a's other writes: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for lead, _ := b.Leader().Lead(ctx); !lead; lead, _ = b.Leader().Lead(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("b does not lead 10 s after a's leader session ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := write(b, leaderWork, "by-b-leading"); err != nil {
		t.Errorf("the new leader's write: %v", err)
	}
	for name, want := range map[string]bool{"by-a-leading": true, "by-b-not-leading": false, "by-a-after-its-session-ended": false,
		"by-a-other-work": true, "by-b-leading": true} {
		err := b.View(ctx, func(tx hub.Tx) error { _, err := tx.AgentByName(name); return err })
		if got := err == nil; got != want {
			t.Errorf("%s stored: %v, want %v (%v)", name, got, want, err)
		}
	}
}
