package postgres

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// replica is one hub process of a test: a store handle and a Service with
// its fallback watcher and, if listening, the store's Watch. The poll
// interval is an hour, so only a notification (or a re-check) wakes a wait.
type replica struct {
	db      *DB
	svc     *hub.Services
	waiters *hub.Waiters // the registry of its parked waits
	log     *syncBuffer
}

func newReplica(tb testing.TB, u string, listen bool) *replica {
	tb.Helper()
	r := &replica{log: &syncBuffer{}}
	db, err := Open(context.Background(), u, Options{Logger: slog.New(slog.NewTextHandler(r.log, nil))})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	r.db = db
	cfg := hub.DefaultConfig()
	cfg.PollInterval = time.Hour
	cfg.SharedStore = true
	r.waiters = hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})
	r.svc = hub.NewServices(hub.NewCore(db, hub.SystemClock{}, cfg, r.waiters))
	if err := r.svc.Init(context.Background()); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.svc.Waits.Run(ctx) })
	if listen {
		wg.Go(func() {
			db.Watch(ctx, Reports{PostedTo: r.svc.Waits.PostedTo, Posted: r.svc.Waits.Poke, Resync: r.svc.Waits.RecheckWaits, AgentChanged: r.svc.Agents.AgentChanged, ForgetAgents: r.svc.Agents.ForgetAgents, Listening: r.svc.Agents.ListenerConnected, Heard: r.svc.Agents.ListenerHeard, PersonRevoked: r.svc.People.PersonRevoked,
				TasksReady: r.svc.Tasks.TasksReady, ItemsClosed: r.svc.Inbox.ItemsClosed})
		})
	}
	tb.Cleanup(func() { cancel(); wg.Wait(); db.Close() })
	return r
}

// agent creates an agent through r and returns it as r authenticates it.
func (r *replica) agent(tb testing.TB, name string) *hub.Agent {
	tb.Helper()
	ctx := context.Background()
	_, token, err := r.svc.Agents.CreateAgent(ctx, hub.CreateAgentRequest{Name: name})
	if err != nil {
		tb.Fatal(err)
	}
	a, err := r.svc.Agents.Authenticate(ctx, token)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// park registers a wait of agentID on r, closed when tb ends.
func (r *replica) park(tb testing.TB, agentID int64) *hub.Waiter {
	tb.Helper()
	w, err := r.waiters.Register(agentID, 0, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close)
	return w
}

// eventually fails tb if cond is not true within 30 s (checked every 10 ms).
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// woken fails tb unless w is woken within 30 s.
func woken(tb testing.TB, w *hub.Waiter, what string) {
	tb.Helper()
	select {
	case <-w.C():
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s: the wait was not woken", what)
	}
}

// A post committed through replica A wakes a wait parked on replica B, and
// B's wait then finds the message.
func TestWatchWakesWaiterOnOtherReplica(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a, b := newReplica(t, u, false), newReplica(t, u, true)
	alice := a.agent(t, "alice")
	bob := b.agent(t, "bob")
	eventually(t, "B listening", func() bool { return backends(t, "hub listen "+b.db.schema) == 1 })

	ctx := context.Background()
	for i := range 3 {
		w := b.park(t, bob.ID)
		m, err := a.svc.Messages.Post(ctx, alice, "", hub.PostRequest{To: []string{"bob"}, Body: "hello from A"})
		if err != nil {
			t.Fatal(err)
		}
		woken(t, w, "post on A, wait on B")
		res, err := b.svc.Waits.Wait(ctx, bob, hub.WaitRequest{TimeoutSeconds: new(int32), AfterID: fmtID(m.ID - 1)})
		if err != nil || len(res.Messages) != 1 || res.Messages[0].ID != m.ID {
			t.Fatalf("round %d: B's wait = %+v, %v; want message %d", i, res, err, m.ID)
		}
		w.Close()
	}
}

// An answer committed through replica A ends the approval that waits for
// it parked on replica B, and a task created ready through A hands it to
// the next_task call parked on B, both at A's commit: B polls only every
// hour, and its parked calls wait far longer than the test.
func TestWatchWakesApprovalAndNextTaskOnOtherReplica(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a, b := newReplica(t, u, false), newReplica(t, u, true)
	bob := b.agent(t, "bob")
	eventually(t, "B listening", func() bool { return backends(t, "hub listen "+b.db.schema) == 1 })
	ctx := context.Background()

	approval := make(chan *hub.ApprovalResult, 1)
	go func() {
		r, err := b.svc.Inbox.RequestApproval(ctx, bob, hub.ApprovalRequest{Tool: "Bash", Wait: 10 * time.Minute})
		if err != nil {
			t.Error(err)
		}
		approval <- r
	}()
	var items []*hub.InboxItem
	eventually(t, "bob's approval open", func() bool {
		var err error
		items, _, err = a.svc.Inbox.ListItems(ctx, nil, "open", "", 10, "")
		return err == nil && len(items) == 1
	})
	if _, err := a.svc.Inbox.AnswerItem(ctx, nil, items[0].ID, hub.Answer{Decision: hub.DecisionAllow}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-approval:
		if r == nil || r.TimedOut || r.Item.Decision != hub.DecisionAllow {
			t.Fatalf("bob's approval on B returned %+v, want it allowed", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bob's approval parked on B still waits 30 s after A committed its answer")
	}

	next := make(chan *hub.NextResult, 1)
	go func() {
		r, err := b.svc.Tasks.Next(ctx, bob, hub.NextRequest{Wait: 10 * time.Minute})
		if err != nil {
			t.Error(err)
		}
		next <- r
	}()
	eventually(t, "bob's next_task parked on B", func() bool { return b.waiters.AgentCount(bob.ID) == 1 })
	task, err := a.svc.Tasks.Create(ctx, nil, hub.ProjectOr(bob.Project), hub.TaskSpec{Title: "work"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-next:
		if r == nil || r.Task == nil || r.Task.ID != task.ID {
			t.Fatalf("bob's next_task on B returned %+v, want task %d", r, task.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bob's next_task parked on B still waits 30 s after A committed a ready task")
	}
}

// A person revoked through replica A has the change streams it holds open
// on replica B ended (a person's token is read at every call, so B already
// refuses its new calls); the admin's stream on B stays open.
func TestWatchEndsRevokedPersonsStreamsOnOtherReplica(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a, b := newReplica(t, u, false), newReplica(t, u, true)
	eventually(t, "B listening", func() bool { return backends(t, "hub listen "+b.db.schema) == 1 })
	ctx := context.Background()
	if _, _, err := a.svc.People.CreatePerson(ctx, "pat", nil); err != nil {
		t.Fatal(err)
	}
	feed := b.waiters.Feed()
	pat, err := feed.Subscribe(hub.PersonPrincipal("pat"), feed.Epoch())
	if err != nil {
		t.Fatal(err)
	}
	defer pat.Close()
	admin, err := feed.Subscribe(hub.Principal{}, feed.Epoch())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := a.svc.People.RevokePerson(ctx, "pat"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pat.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("pat's stream on B still open 10 s after pat was revoked on A")
	}
	select {
	case <-admin.Done():
		t.Error("the admin's stream on B ended with pat's revocation")
	default:
	}
}

// replicasWithRole starts replica A as the test's role and a listening
// replica B as a role of its own (which the test may bar from logging in),
// on one fresh schema.
func replicasWithRole(t *testing.T) (a, b *replica, role string) {
	t.Helper()
	u := pgtest.Schema(t)
	role, ru := freshRole(t, u)
	a = newReplica(t, u, false)
	pgtest.Exec(t, `GRANT USAGE ON SCHEMA `+a.db.schema+` TO `+role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA `+a.db.schema+` TO `+role)
	return a, newReplica(t, ru, true), role
}

// When B's listening connection drops, the posts notified meanwhile are
// lost: once B listens again it re-checks every parked wait and says so.
func TestWatchReconnectsAndRechecks(t *testing.T) {
	t.Parallel()
	a, b, role := replicasWithRole(t)
	schema := a.db.schema
	alice, bob, carol := a.agent(t, "alice"), b.agent(t, "bob"), b.agent(t, "carol")
	listener := "hub listen " + schema
	eventually(t, "B listening", func() bool { return backends(t, listener) == 1 })

	wb, wc := b.park(t, bob.ID), b.park(t, carol.ID)
	// B may not log in while its listener is down: the post is notified to nobody.
	pgtest.Exec(t, `ALTER ROLE `+role+` NOLOGIN`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '`+listener+`'`)
	eventually(t, "B's listener gone", func() bool { return backends(t, listener) == 0 })
	if _, err := a.svc.Messages.Post(context.Background(), alice, "", hub.PostRequest{To: []string{"bob"}, Body: "while B was deaf"}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, `ALTER ROLE `+role+` LOGIN`)
	woken(t, wb, "bob, who got a message while B was not listening")
	woken(t, wc, "carol, whose wait must be re-checked too")
	eventually(t, "B's log", func() bool { return strings.Contains(b.log.String(), "re-checked every parked wait") })
	for _, want := range []string{"lost the connection that listens", "re-checked every parked wait"} {
		if !strings.Contains(b.log.String(), want) {
			t.Errorf("B's log does not say %q:\n%s", want, b.log.String())
		}
	}
}

// A token revoked, or an agent disabled, on replica A while B's listening
// connection is down (the notification is lost): once B listens again it
// checks the tokens of its parked waits and ends those the change
// concerns with the errors a reported change gives; the other waits stay
// parked.
func TestWatchReconnectEndsRevokedWaits(t *testing.T) {
	t.Parallel()
	a, b, role := replicasWithRole(t)
	schema := a.db.schema
	listener := "hub listen " + schema
	eventually(t, "B listening", func() bool { return backends(t, listener) == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ended struct {
		name string
		err  error
	}
	done := make(chan ended, 3)
	names := []string{"bob", "carol", "dave"}
	for _, name := range names {
		agent := b.agent(t, name)
		go func() {
			_, err := b.svc.Waits.Wait(ctx, agent, hub.WaitRequest{TimeoutSeconds: new(int32(600))})
			done <- ended{name, err}
		}()
		eventually(t, name+" parked on B", func() bool { return b.waiters.AgentCount(agent.ID) == 1 })
	}
	pgtest.Exec(t, `ALTER ROLE `+role+` NOLOGIN`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '`+listener+`'`)
	eventually(t, "B's listener gone", func() bool { return backends(t, listener) == 0 })
	if _, _, err := a.svc.Agents.RotateToken(context.Background(), "bob", true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Agents.SetAgentDisabled(context.Background(), "carol", true); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, `ALTER ROLE `+role+` LOGIN`)
	want := map[string]string{"bob": hub.EUNAUTHORIZED, "carol": hub.EPERMISSION}
	for range want {
		select {
		case e := <-done:
			if code := hub.ErrorCode(e.err); code != want[e.name] {
				t.Errorf("%s's wait ended with %v (code %q), want code %q", e.name, e.err, code, want[e.name])
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the waits of the revoked token and the disabled agent did not end within 30 s of B listening again")
		}
	}
	eventually(t, "B's log", func() bool { return strings.Contains(b.log.String(), "re-checked every parked wait") })
	select {
	case e := <-done:
		t.Errorf("%s's wait ended (%v), want it still parked: its token and agent did not change", e.name, e.err)
	case <-time.After(200 * time.Millisecond):
	}
}

// backends counts the server's connections named name.
func backends(tb testing.TB, name string) int {
	tb.Helper()
	var n int
	c := pgtest.Conn(tb)
	defer c.Close(context.Background())
	if err := c.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// One replica leads at a time; when the leader's connection is killed,
// the other takes over at its next Lead, and the old leader knows it no
// longer leads. A resignation hands over at once.
func TestLeaderFailover(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	a, b := openTest(t, u), openTest(t, u)
	la, lb := a.Leader(), b.Leader()
	ctx := context.Background()
	lead := func(l *Leader) bool {
		t.Helper()
		ok, err := l.Lead(ctx)
		if err != nil {
			t.Fatalf("Lead: %v", err)
		}
		return ok
	}
	if !lead(la) || lead(lb) || !lead(la) || lead(lb) {
		t.Fatal("want A to lead and B not")
	}
	pid := la.conn.PgConn().PID()
	c := pgtest.Conn(t)
	if _, err := c.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	eventually(t, "B takes over", func() bool { return lead(lb) })
	if ok, _ := la.Lead(ctx); ok {
		t.Error("A still leads after its connection was killed and B took over")
	}
	if err := lb.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if !lead(la) || lead(lb) {
		t.Error("after B resigned, want A to lead and B not")
	}
}

func fmtID(id int64) string { return hub.FormatMessageID(id) }

// The message ID counter on its own (without the write lock that Update
// also takes) hands IDs out in commit order: a second posting transaction
// waits on the counter's row until the first commits, then takes the next
// ID. So a reader can never see ID n+1 while n is still in flight.
func TestMessageIDsInCommitOrder(t *testing.T) {
	t.Parallel()
	db := openTest(t, pgtest.Schema(t))
	ctx := context.Background()
	var bob int64
	if err := db.Update(ctx, func(tx hub.Tx) error {
		a := &hub.Agent{Name: "bob", CreatedAt: time.Unix(1, 0)}
		err := tx.CreateAgent(a, nil)
		bob = a.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	post := func(tx pgx.Tx) (int64, error) {
		m := &hub.Message{From: "alice", To: []string{"bob"}, Body: "x", Kind: hub.KindMessage, CreatedAt: time.Unix(1, 0)}
		err := (&Tx{ctx: ctx, tx: tx, db: db}).InsertMessage(m, []hub.Delivery{{AgentID: bob}})
		return m.ID, err
	}
	begin := func() (pgx.Tx, uint32) {
		c, err := db.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tx.Rollback(ctx) })
		return tx, c.Conn().PgConn().PID()
	}
	first, _ := begin()
	id1, err := post(first)
	if err != nil {
		t.Fatal(err)
	}
	second, pid2 := begin()
	got := make(chan int64, 1)
	go func() {
		id, err := post(second)
		if err != nil {
			t.Error(err)
		}
		got <- id
	}()
	c := pgtest.Conn(t)
	defer c.Close(ctx)
	eventually(t, "the second poster waits on the counter's row lock", func() bool {
		var waiting bool
		err := c.QueryRow(ctx, `SELECT COALESCE(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`, pid2).Scan(&waiting)
		return err == nil && waiting
	})
	var visible int64
	if err := db.View(ctx, func(tx hub.Tx) (err error) { visible, err = tx.MaxMessageID(); return err }); err != nil || visible != 0 {
		t.Errorf("a reader sees message %d (%v) while both posts are in flight, want none", visible, err)
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	id2 := <-got
	if id2 != id1+1 {
		t.Errorf("IDs %d then %d, want consecutive in commit order", id1, id2)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// On PostgreSQL a failed statement aborts the transaction even when fn
// swallows its error; that write alone is rolled back and reported, and
// the writes sharing its commit are kept.
func TestSwallowedStatementErrorRollsBackOnlyThatWrite(t *testing.T) {
	t.Parallel()
	db := openTest(t, pgtest.Schema(t))
	ctx := context.Background()
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Update(ctx, func(tx hub.Tx) error {
				a := &hub.Agent{Name: fmtID(int64(i)), CreatedAt: time.Unix(1, 0)}
				if err := tx.CreateAgent(a, nil); err != nil {
					return err
				}
				if i == 7 { // a delivery to a missing agent, its error ignored
					_ = tx.InsertMessage(&hub.Message{From: "x", Body: "x", Kind: hub.KindMessage, CreatedAt: time.Unix(1, 0)}, []hub.Delivery{{AgentID: 99999}})
				}
				return nil
			})
		})
	}
	wg.Wait()
	var names []string
	if err := db.View(ctx, func(tx hub.Tx) error {
		as, err := tx.ListAgents(true)
		for _, a := range as {
			names = append(names, a.Name)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if (i == 7) != (err != nil) {
			t.Errorf("write %d: error %v", i, err)
		}
	}
	if len(names) != n-1 || slices.Contains(names, fmtID(7)) {
		t.Errorf("agents = %v, want all but %s", names, fmtID(7))
	}
}

// A cron job's scheduled slot runs once, in the schema too: a second run
// record for the slot is refused, and with it the message posted in the
// same transaction. Manual runs are not slots.
func TestCronSlotRunsOnce(t *testing.T) {
	t.Parallel()
	db := openTest(t, pgtest.Schema(t))
	ctx := context.Background()
	slot := time.Unix(3600, 0)
	run := func(manual bool) error {
		return db.Update(ctx, func(tx hub.Tx) error {
			m := &hub.Message{From: "cron", Body: "standup", Kind: hub.KindMessage, CreatedAt: slot}
			if err := tx.InsertMessage(m, nil); err != nil {
				return err
			}
			return tx.InsertCronRun(&hub.CronRun{JobID: 1, JobName: "daily", ScheduledAt: slot, RanAt: slot, Status: hub.CronRunOK, Manual: manual})
		})
	}
	if err := run(false); err != nil {
		t.Fatal(err)
	}
	if err := run(false); hub.ErrorCode(err) != hub.ECONFLICT {
		t.Errorf("second run of the slot = %v, want ECONFLICT", err)
	}
	for range 2 {
		if err := run(true); err != nil {
			t.Errorf("manual run: %v", err)
		}
	}
	var msgs int64
	if err := db.View(ctx, func(tx hub.Tx) (err error) { msgs, err = tx.MaxMessageID(); return err }); err != nil || msgs != 3 {
		t.Errorf("messages posted = %d (%v), want 3: the refused run posted nothing", msgs, err)
	}
}
