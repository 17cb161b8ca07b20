package postgres

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
)

// holds reports whether l believes it holds the leader lock.
func holds(l *Leader) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// A leader whose connection goes silent (a partition behind a proxy: the
// server sees its session open and idle) stops leading, says so (Lost:
// its tick stops there), and another replica takes over within seconds,
// after the first stopped. The server
// used to keep the lock for the silent session until TCP noticed: two
// hours, or never through a proxy.
func TestSilentLeaderLosesTheLock(t *testing.T) {
	u := pgtest.Schema(t)
	ua, link := pgtest.Cuttable(t, u)
	a, b := openTest(t, ua), openTest(t, u)
	ctx := context.Background()
	if lead, err := a.Leader().Lead(ctx); !lead || err != nil {
		t.Fatalf("a.Lead = %v, %v; want it to lead", lead, err)
	}
	if lead, err := b.Leader().Lead(ctx); lead || err != nil {
		t.Fatalf("b.Lead = %v, %v while a leads", lead, err)
	}
	lost := a.Leader().Lost()
	if ended(lost) || !ended(b.Leader().Lost()) {
		t.Fatalf("Lost ended: a (leads) %v, b (does not) %v; want false, true", ended(lost), ended(b.Leader().Lost()))
	}
	link.Stall()
	defer link.Resume()
	stalled := time.Now()
	var aStopped, bLeads time.Duration
	for aStopped == 0 || bLeads == 0 {
		if aStopped == 0 && !holds(a.Leader()) {
			aStopped = time.Since(stalled)
			if !ended(lost) {
				t.Fatal("a stopped leading, and the channel of its Lost is still open")
			}
		}
		if bLeads == 0 {
			if lead, _ := b.Leader().Lead(ctx); lead {
				bLeads = time.Since(stalled)
			}
		}
		if time.Since(stalled) > 20*time.Second {
			t.Fatalf("20 s after a's connection went silent: a stopped leading after %v, b leads after %v (0: not yet)", aStopped, bLeads)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bLeads < aStopped {
		t.Errorf("b led %v after the stall, before a stopped leading (%v)", bLeads, aStopped)
	}
	t.Logf("a stopped leading %v after its connection went silent; b led after %v", aStopped, bLeads)
	link.Resume()
	if lead, _ := a.Leader().Lead(ctx); lead {
		t.Error("a leads again while b holds the lock")
	}
}

// ended reports whether c is closed.
func ended(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A replica whose connection goes silent in the middle of a write
// transaction (holding the write lock) holds up the other replicas'
// writes for seconds, not until TCP notices: the server ends a session
// idle in a transaction. Its own write fails as an outage, and nothing of
// it is saved.
func TestSilentWriterReleasesTheWriteLock(t *testing.T) {
	u := pgtest.Schema(t)
	ua, link := pgtest.Cuttable(t, u)
	a, b := openTest(t, ua), openTest(t, u)
	defer link.Resume() // before the stores close, which wait for their writes
	ctx := context.Background()
	inside := make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.Update(ctx, func(tx hub.Tx) error {
			if err := tx.CreateAgent(&hub.Agent{Name: "first", CreatedAt: time.Unix(1, 0)}, []byte("h1")); err != nil {
				return err
			}
			link.Stall()
			close(inside)
			return tx.CreateAgent(&hub.Agent{Name: "second", CreatedAt: time.Unix(1, 0)}, []byte("h2"))
		})
	}()
	<-inside
	start := time.Now()
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.Update(ctx, func(tx hub.Tx) error {
			return tx.CreateAgent(&hub.Agent{Name: "other", CreatedAt: time.Unix(1, 0)}, []byte("h3"))
		})
	}()
	select {
	case err := <-bDone:
		if err != nil {
			t.Fatalf("b's write: %v", err)
		}
		t.Logf("b's write waited %v for a's silent transaction", time.Since(start).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("b's write still waits after 20 s for the write lock of a's silent transaction")
	}
	link.Resume()
	err := <-aDone
	if hub.ErrorCode(err) != hub.EUNAVAILABLE {
		t.Errorf("a's write after its session was ended: %s %v, want %s", hub.ErrorCode(err), err, hub.EUNAVAILABLE)
	}
	err = b.View(ctx, func(tx hub.Tx) error { _, err := tx.AgentByName("first"); return err })
	if hub.ErrorCode(err) != hub.ENOTFOUND {
		t.Errorf("a's unacknowledged write is in the store (AgentByName: %v)", err)
	}
}

// A listening connection gone silent is given up after a quiet spell and
// a ping without answer: Watch connects again and re-checks every parked
// wait (Resync), since notifications sent meanwhile may be lost. It used
// to wait on the silent connection for as long as TCP kept it.
func TestSilentListenerListensAgain(t *testing.T) {
	u := pgtest.Schema(t)
	ua, link := pgtest.Cuttable(t, u)
	db := openTest(t, ua)
	listening, resynced := make(chan struct{}, 100), make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Watch(ctx, Reports{
			PostedTo: func(int64, int64, []int64) {}, Posted: func() { listening <- struct{}{} },
			Resync: func() int { resynced <- struct{}{}; return 0 }, AgentChanged: func(int64, hub.AgentChange) {}, ForgetAgents: func() {}, Listening: func(bool) {}, Heard: func() {},
		})
	}()
	t.Cleanup(func() { link.Resume(); cancel(); <-done })
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not listen within 30 s")
	}
	link.Stall()
	time.Sleep(listenQuiet + listenPingTimeout + time.Second)
	link.Resume()
	select {
	case <-resynced:
	case <-time.After(15 * time.Second):
		t.Fatal("15 s after its silent connection came back, Watch had not connected again and re-checked the parked waits")
	}
}

// A listener that cannot connect waits its pause on the hub's clock
// before it tries again: nothing connects while the clock stands still,
// and the next attempt follows the pause.
func TestListenerRetriesOnTheClock(t *testing.T) {
	u := pgtest.Schema(t)
	ua, link := pgtest.Cuttable(t, u)
	clock := hub.NewFakeClock(time.Unix(1_700_000_000, 0))
	db, err := Open(context.Background(), ua, Options{Logger: slog.New(slog.DiscardHandler), Clock: clock})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	link.Cut()
	listening := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Watch(ctx, Reports{
			PostedTo: func(int64, int64, []int64) {}, Posted: func() { listening <- struct{}{} },
			Resync: func() int { return 0 }, AgentChanged: func(int64, hub.AgentChange) {}, ForgetAgents: func() {}, Listening: func(bool) {}, Heard: func() {},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(30 * time.Second); clock.Timers() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("Watch did not wait to retry within 30 s of a refused connection")
		}
		runtime.Gosched()
	}
	link.Restore()
	select {
	case <-listening:
		t.Fatal("Watch connected again before its pause passed on the clock")
	case <-time.After(200 * time.Millisecond):
	}
	clock.Advance(100 * time.Millisecond)
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not listen within 30 s of its pause passing on the clock")
	}
}
