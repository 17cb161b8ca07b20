// Package crash is the kill -9 durability harness: it runs the real hub
// binary, drives concurrent writes over gRPC, SIGKILLs the process at random
// moments, restarts it on the same data dir and checks that every write
// whose reply was received survived, once, in order, in a sound database.
//
//	go test ./test/crash                        # 20 cycles (5 with -short)
//	CRASH_CYCLES=100 go test ./test/crash -v    # the long mode
//	go test ./test/crash -args -crash.cycles=50 -crash.seed=42
//	scripts/ci-postgres.sh -- go test -run Postgres ./test/crash   # on PostgreSQL
//
// Figures from these runs are in RELIABILITY.md.
package crash

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	_ "github.com/mattn/go-sqlite3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var (
	cyclesFlag = flag.Int("crash.cycles", 0, "kill -9 cycles (default $CRASH_CYCLES, else 20; 5 with -short)")
	seedFlag   = flag.Uint64("crash.seed", 0, "random seed (default $CRASH_SEED, else the time)")
	syncFlag   = flag.String("crash.synchronous", "", "the hub's --synchronous (default $CRASH_SYNCHRONOUS, else the hub's default)")
)

const (
	numAgents = 6
	// Writers per agent: 18 concurrent writes keep the store's group
	// commit batching several writes per commit, so kills land inside a
	// batch and between a batch's commit and its replies.
	writersPerAgent = 3
	fullEvery       = 10 // a full re-verification of every message every this many cycles
	earlyKillP      = 8  // one cycle in this many also kills a hub during its start-up
	maxRunMilli     = 450
	minRunMilli     = 40
)

func numCycles() int {
	if n := askedCycles(); n > 0 {
		return n
	}
	if testing.Short() {
		return 5
	}
	return 20
}

// askedCycles is the cycle count of -crash.cycles or $CRASH_CYCLES, else 0.
func askedCycles() int {
	if *cyclesFlag > 0 {
		return *cyclesFlag
	}
	if s := os.Getenv("CRASH_CYCLES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

func seed() uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("CRASH_SEED"); s != "" {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return n
		}
	}
	return uint64(time.Now().UnixNano())
}

// hubFlags are the flags every hub of the harness runs with: no rate limit
// (the harness writes as fast as it can) and the chosen synchronous mode.
func hubFlags() []string {
	f := []string{"--rate-limit", "0"}
	s := *syncFlag
	if s == "" {
		s = os.Getenv("CRASH_SYNCHRONOUS")
	}
	if s != "" {
		f = append(f, "--synchronous", s)
	}
	return f
}

// ledger is what the clients know: which writes were acknowledged.
type ledger struct {
	mu          sync.Mutex
	posts       map[string]int64  // body nonce → ID of the reply
	sent        map[string]bool   // every nonce sent, acknowledged or not
	heartbeats  map[string]string // agent → newest acknowledged heartbeat ID
	hbAcks      int
	logs        map[string]bool // acknowledged activity-log titles
	checkpoints map[string]bool // acknowledged checkpoint texts
	minNewID    int64           // every ID acknowledged from now on must be above this
	errs        []string

	noLogs, noCheckpoints atomic.Bool // the RPC answered Unimplemented
}

func newLedger() *ledger {
	return &ledger{
		posts: map[string]int64{}, sent: map[string]bool{}, heartbeats: map[string]string{},
		logs: map[string]bool{}, checkpoints: map[string]bool{},
	}
}

func (l *ledger) errorf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

type agentCreds struct{ name, token string }

func authed(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// stats are the figures of one run.
type stats struct {
	cycles, earlyKills                         int
	posts, heartbeats, logs, checkpoints       int // acknowledged and verified
	unacked, unackedPresent                    int // sent without a reply; of those, found
	maxID                                      int64
	integrityChecks                            int
	logsVerified, checkpointsVerified, skipped bool
}

func TestCrashDurability(t *testing.T) {
	dataDir, snapDir := t.TempDir(), t.TempDir()
	runHarness(t, numCycles(), dataDir, hubFlags(), func(led *ledger, st *stats) {
		integrity(t, dataDir, snapDir, led, st)
	})
}

// runHarness runs n kill -9 cycles of hubs started on dataDir with flags;
// check looks into the store after each kill.
func runHarness(t *testing.T, n int, dataDir string, flags []string, check func(*ledger, *stats)) {
	sd := seed()
	rng := rand.New(rand.NewPCG(sd, sd^0x9e3779b97f4a7c15))
	t.Logf("crash harness: %d cycles, seed %d (rerun with -args -crash.seed=%d), hub flags %q", n, sd, sd, flags)

	led := newLedger()
	var st stats

	// Set-up on a hub that is not killed: the agents.
	p := startHub(t, dataDir, flags...)
	adminTok := readAdminToken(t, dataDir)
	agents := createAgents(t, p, adminTok)
	p.stop(t)

	for cycle := 1; cycle <= n; cycle++ {
		p := startHub(t, dataDir, flags...)
		verify(t, p, adminTok, agents, led, &st, cycle%fullEvery == 0)
		if t.Failed() {
			p.kill()
			return
		}
		run := time.Duration(minRunMilli+rng.IntN(maxRunMilli-minRunMilli)) * time.Millisecond
		drive(p, agents, led, cycle, run)
		check(led, &st)
		if t.Failed() {
			return
		}
		st.cycles++
		if rng.IntN(earlyKillP) == 0 {
			// Kill a hub while it starts: opening the store, recovering the
			// WAL, migrating, binding.
			q := startHubNoWait(t, dataDir, flags...)
			time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
			q.kill()
			check(led, &st)
			st.earlyKills++
		}
	}
	p = startHub(t, dataDir, flags...)
	verify(t, p, adminTok, agents, led, &st, true)
	p.stop(t)

	st.posts = len(led.posts)
	st.heartbeats = led.hbAcks
	st.unacked = len(led.sent) - len(led.posts)
	t.Logf("crash harness: %d kill -9 cycles (+%d kills during start-up), %d integrity checks; "+
		"verified %d acknowledged posts (max ID %d), %d heartbeats, %d activity logs (%s), %d checkpoints (%s); "+
		"%d posts sent without a reply, %d of them committed",
		st.cycles, st.earlyKills, st.integrityChecks, st.posts, st.maxID, st.heartbeats,
		len(led.logs), supported(led.noLogs.Load(), st.logsVerified), len(led.checkpoints), supported(led.noCheckpoints.Load(), st.checkpointsVerified),
		st.unacked, st.unackedPresent)
	if out := os.Getenv("CRASH_REPORT"); out != "" {
		os.WriteFile(out, fmt.Appendf(nil, "cycles=%d early_kills=%d integrity_checks=%d posts=%d heartbeats=%d activity_logs=%d checkpoints=%d unacked=%d unacked_committed=%d max_id=%d seed=%d\n",
			st.cycles, st.earlyKills, st.integrityChecks, st.posts, st.heartbeats, len(led.logs), len(led.checkpoints), st.unacked, st.unackedPresent, st.maxID, sd), 0o644)
	}
}

func supported(unimplemented, verified bool) string {
	switch {
	case unimplemented:
		return "RPC unimplemented: skipped"
	case verified:
		return "verified in the database"
	default:
		return "no table found to verify against"
	}
}

func readAdminToken(t *testing.T, dataDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func createAgents(t *testing.T, p *hubProc, adminTok string) []agentCreds {
	t.Helper()
	admin := hubv1.NewAdminServiceClient(p.conn)
	var out []agentCreds
	for i := range numAgents {
		ctx, cancel := withTimeout(10 * time.Second)
		r, err := admin.CreateAgent(authed(ctx, adminTok), &hubv1.CreateAgentRequest{Name: fmt.Sprintf("crash-%d", i)})
		cancel()
		if err != nil {
			t.Fatalf("create agent: %v", err)
		}
		out = append(out, agentCreds{name: r.GetAgent().GetName(), token: r.GetToken()})
	}
	return out
}

// drive runs writersPerAgent writers per agent for about d, then kills the
// hub while they write, and waits for every writer to see the failure.
func drive(p *hubProc, agents []agentCreds, led *ledger, cycle int, d time.Duration) {
	var killed atomic.Bool
	var wg sync.WaitGroup
	for i, a := range agents {
		for w := range writersPerAgent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				writer(p, a, w, agents[(i+1)%len(agents)].name, led, cycle, &killed)
			}()
		}
	}
	time.Sleep(d)
	killed.Store(true)
	p.kill()
	wg.Wait()
}

// writer posts, heartbeats, logs and checkpoints until the hub dies. An
// error before the kill is a failure; after it, the outcome is unknown and
// the write may or may not be there (but at most once).
func writer(p *hubProc, a agentCreds, w int, to string, led *ledger, cycle int, killed *atomic.Bool) {
	client := hubv1.NewAgentServiceClient(p.conn)
	ctx := authed(context.Background(), a.token)
	// failed records err unless the hub was being killed; the writer stops
	// at its first error either way.
	failed := func(what string, err error) {
		if killed.Load() {
			return
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.Canceled:
			// The process may be dying already: the killer sets the flag
			// just before the signal, and the connection can drop first.
			time.Sleep(50 * time.Millisecond)
			if killed.Load() {
				return
			}
		}
		led.errorf("%s as %s before the kill: %v", what, a.name, err)
	}
	var prevID int64
	for seq := 0; ; seq++ {
		nonce := fmt.Sprintf("crash c%d %s w%d s%d", cycle, a.name, w, seq)
		led.mu.Lock()
		led.sent[nonce] = true
		led.mu.Unlock()
		callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		r, err := client.PostMessage(callCtx, &hubv1.PostMessageRequest{To: []string{to}, Body: nonce})
		cancel()
		if err != nil {
			failed("post", err)
			return
		}
		id, _ := strconv.ParseInt(r.GetMessage().GetId(), 10, 64)
		led.mu.Lock()
		led.posts[nonce] = id
		floor := led.minNewID
		led.mu.Unlock()
		if id <= floor || id <= prevID {
			led.errorf("post %q got ID %d: not above the IDs before it (%d seen before this start, %d by this writer)", nonce, id, floor, prevID)
		}
		if got := r.GetMessage().GetFrom(); got != a.name {
			led.errorf("post by %s has from=%q", a.name, got)
		}
		prevID = id

		// One writer per agent heartbeats: the check that an agent's
		// heartbeat never goes back needs its heartbeats in order.
		if seq%4 == 0 && w == 0 {
			callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
			hb, err := client.Heartbeat(callCtx, &hubv1.HeartbeatRequest{})
			cancel()
			if err != nil {
				failed("heartbeat", err)
				return
			}
			led.mu.Lock()
			led.hbAcks++
			if hb.GetHeartbeatId() > led.heartbeats[a.name] {
				led.heartbeats[a.name] = hb.GetHeartbeatId()
			}
			led.mu.Unlock()
		}
		if seq%3 == 1 && !led.noLogs.Load() {
			title := nonce + " log"
			callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := client.CreateActivityLog(callCtx, &hubv1.CreateActivityLogRequest{Type: "other", Title: title, Content: []string{"crash harness"}})
			cancel()
			if status.Code(err) == codes.Unimplemented {
				led.noLogs.Store(true)
			} else if err != nil {
				failed("activity log", err)
				return
			} else {
				led.mu.Lock()
				led.logs[title] = true
				led.mu.Unlock()
			}
		}
		if seq%3 == 2 && !led.noCheckpoints.Load() {
			text := nonce + " checkpoint"
			callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
			_, err := client.Checkpoint(callCtx, &hubv1.CheckpointRequest{CurrentActivity: text})
			cancel()
			if status.Code(err) == codes.Unimplemented {
				led.noCheckpoints.Store(true)
			} else if err != nil {
				failed("checkpoint", err)
				return
			} else {
				led.mu.Lock()
				led.checkpoints[text] = true
				led.mu.Unlock()
			}
		}
	}
}

// verify checks, on a freshly restarted hub, that every acknowledged post is
// there exactly once with its ID, that IDs increase, and that no agent's
// heartbeat went back. Only messages above the last verified ID are read,
// except on full passes.
func verify(t *testing.T, p *hubProc, adminTok string, agents []agentCreds, led *ledger, st *stats, full bool) {
	t.Helper()
	led.mu.Lock()
	errs := led.errs
	led.errs = nil
	led.mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
	admin := hubv1.NewAdminServiceClient(p.conn)
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	ctx = authed(ctx, adminTok)

	led.mu.Lock()
	from := led.minNewID
	if full {
		from = 0
	}
	led.mu.Unlock()
	seen := map[string]int64{}
	last := from
	cursor := ""
	if from > 0 {
		cursor = strconv.FormatInt(from, 10)
	}
	for {
		r, err := hubv1.NewAgentServiceClient(p.conn).ListMessages(ctx, &hubv1.ListMessagesRequest{AfterId: cursor, Limit: 500})
		if err != nil {
			t.Fatalf("list messages after restart: %v\n%s", err, p.tail())
		}
		for _, m := range r.GetMessages() {
			id, err := strconv.ParseInt(m.GetId(), 10, 64)
			if err != nil {
				t.Fatalf("message ID %q: %v", m.GetId(), err)
			}
			if id <= last {
				t.Errorf("message IDs not increasing: %d after %d", id, last)
			}
			last = id
			if !strings.HasPrefix(m.GetBody(), "crash ") {
				continue // a system message (nudge, pulse)
			}
			if prev, dup := seen[m.GetBody()]; dup {
				t.Errorf("post %q is stored twice: IDs %d and %d", m.GetBody(), prev, id)
			}
			seen[m.GetBody()] = id
		}
		if !r.GetHasMore() {
			break
		}
		cursor = r.GetCursor()
	}

	led.mu.Lock()
	defer led.mu.Unlock()
	lost := 0
	for nonce, id := range led.posts {
		if id <= from {
			continue // verified before, outside this pass
		}
		got, ok := seen[nonce]
		switch {
		case !ok:
			if lost++; lost <= 10 {
				t.Errorf("acknowledged post %q (ID %d) is missing after kill -9", nonce, id)
			}
		case got != id:
			t.Errorf("acknowledged post %q had ID %d, now %d", nonce, id, got)
		}
	}
	if lost > 10 {
		t.Errorf("… %d acknowledged posts missing in all", lost)
	}
	present := 0
	for nonce := range seen {
		if _, acked := led.posts[nonce]; !acked {
			if !led.sent[nonce] {
				t.Errorf("post %q is stored but was never sent", nonce)
			}
			present++
		}
	}
	if full {
		st.unackedPresent = present
	}
	led.minNewID = max(led.minNewID, last)
	st.maxID = max(st.maxID, last)

	for _, a := range agents {
		want := led.heartbeats[a.name]
		if want == "" {
			continue
		}
		r, err := admin.GetAgent(ctx, &hubv1.GetAgentRequest{Name: a.name})
		if err != nil {
			t.Fatalf("get agent %s: %v", a.name, err)
		}
		if got := r.GetAgent().GetCurrentHeartbeatId(); got < want {
			t.Errorf("agent %s: current heartbeat ID %s after restart, but heartbeat %s was acknowledged", a.name, got, want)
		}
	}
}
