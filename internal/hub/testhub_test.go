package hub_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
)

// coreT0 is the fake clock's starting time in the service tests.
var coreT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// services are the hub's services over one store, wired as internal/app
// wires them.
type services struct {
	*hub.Core
	Waiters *hub.Waiters // the registry of parked waits
	*hub.Agents
	*hub.Messages
	*hub.Receipts
	*hub.Waits
	*hub.Liveness
	*hub.Schedule
	*hub.Nudges
	*hub.Reservations
	*hub.Projects
	*hub.Injections
	*hub.Ops
	Tasks   *hub.Tasks // a field: its methods' names are the board's own
	Usage   *hub.Usage
	Inbox   *hub.Inbox
	Budgets *hub.Budgets
}

// newServices builds and initialises the services over st.
func newServices(tb testing.TB, st hub.Store, clock hub.Clock, cfg hub.Config) *services {
	tb.Helper()
	waiters := hub.NewWaiters(cfg.WaitLimits, clock)
	all := hub.NewServices(hub.NewCore(st, clock, cfg, waiters))
	if err := all.Init(context.Background()); err != nil {
		tb.Fatalf("Init: %v", err)
	}
	return &services{
		Core: all.Core, Waiters: waiters, Agents: all.Agents, Messages: all.Messages, Receipts: all.Receipts,
		Waits: all.Waits, Liveness: all.Liveness, Schedule: all.Schedule, Nudges: all.Nudges,
		Reservations: all.Reservations, Projects: all.Projects, Injections: all.Injections, Ops: all.Ops,
		Tasks: all.Tasks, Usage: all.Usage, Inbox: all.Inbox, Budgets: all.Budgets,
	}
}

// testHub is the services over a SQLite file in a temporary directory,
// with a fake clock.
type testHub struct {
	*services
	DB    *sqlite.DB
	Path  string
	Clock *hub.FakeClock
}

// newTestHub returns a hub whose configuration is the default modified by
// each of opts, on a fake clock. The store is closed when the test ends.
func newTestHub(tb testing.TB, opts ...func(*hub.Config)) *testHub {
	tb.Helper()
	clock := hub.NewFakeClock(coreT0)
	h := newTestHubOn(tb, clock, opts...)
	h.Clock = clock
	return h
}

// newRealTimeHub is newTestHub on the system clock, for what real time
// drives: a caller's deadline, the fallback watcher's polls. Its Clock is nil.
func newRealTimeHub(tb testing.TB, opts ...func(*hub.Config)) *testHub {
	tb.Helper()
	return newTestHubOn(tb, hub.SystemClock{}, opts...)
}

func newTestHubOn(tb testing.TB, clock hub.Clock, opts ...func(*hub.Config)) *testHub {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "hub.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	cfg.AdminTokenHash = hub.HashToken("admin-secret")
	for _, o := range opts {
		o(&cfg)
	}
	return &testHub{services: newServices(tb, db, clock, cfg), DB: db, Path: path}
}

// over returns other services on h's store seen through st (a wrapper of
// h.DB that counts or holds its calls), with h's clock, initialised.
func (h *testHub) over(tb testing.TB, st hub.Store) *services {
	tb.Helper()
	cfg := hub.DefaultConfig()
	cfg.Location = time.UTC
	var clock hub.Clock = hub.SystemClock{}
	if h.Clock != nil {
		clock = h.Clock
	}
	return newServices(tb, st, clock, cfg)
}

// runWatcher runs the fallback watcher until the test ends.
func (h *testHub) runWatcher(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
}

// agent creates an agent and returns it as its token authenticates it, as
// the server would, together with the token.
func (h *testHub) agent(tb testing.TB, name string) (*hub.Agent, string) {
	tb.Helper()
	_, token, err := h.CreateAgent(context.Background(), hub.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatalf("CreateAgent(%s): %v", name, err)
	}
	return h.auth(tb, token), token
}

// auth authenticates token and fails the test on error.
func (h *testHub) auth(tb testing.TB, token string) *hub.Agent {
	tb.Helper()
	a, err := h.Authenticate(context.Background(), token)
	if err != nil {
		tb.Fatalf("Authenticate: %v", err)
	}
	return a
}

// agents creates one agent per name.
func (h *testHub) agents(tb testing.TB, names ...string) []*hub.Agent {
	tb.Helper()
	out := make([]*hub.Agent, len(names))
	for i, n := range names {
		out[i], _ = h.agent(tb, n)
	}
	return out
}

// post posts req from sender and fails the test on error.
func (h *testHub) post(tb testing.TB, sender *hub.Agent, req hub.PostRequest) *hub.Message {
	tb.Helper()
	m, err := h.Post(context.Background(), sender, "", req)
	if err != nil {
		tb.Fatalf("Post(%+v): %v", req, err)
	}
	return m
}

// inbox lists every message of a's inbox.
func (h *testHub) inbox(tb testing.TB, a *hub.Agent) []*hub.Message {
	tb.Helper()
	ms, _, _, err := h.List(context.Background(), a, hub.ListRequest{Limit: 500})
	if err != nil {
		tb.Fatalf("List(%s): %v", a.Name, err)
	}
	return ms
}

// maxMessageID returns the newest message ID in the store.
func (h *testHub) maxMessageID(tb testing.TB) int64 {
	tb.Helper()
	var id int64
	if err := h.DB.View(context.Background(), func(tx hub.Tx) (err error) { id, err = tx.MaxMessageID(); return err }); err != nil {
		tb.Fatal(err)
	}
	return id
}

// wantCode fails the test unless err carries the domain code want.
func wantCode(tb testing.TB, what string, err error, want string) {
	tb.Helper()
	if got := hub.ErrorCode(err); got != want {
		tb.Errorf("%s: code %q (%v), want %q", what, got, err, want)
	}
}

// msgIDs returns the IDs of ms.
func msgIDs(ms []*hub.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// containsID reports whether ms holds a message with the given ID.
func containsID(ms []*hub.Message, id int64) bool {
	return slices.Contains(msgIDs(ms), id)
}

// waitFor polls cond until it holds, failing the test after a generous while.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// seconds returns a pointer to n, for WaitRequest.TimeoutSeconds.
func seconds(n int32) *int32 { return &n }
