package admission

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/store/sqlite"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const adminToken = "the-admin-token-for-the-gate"

// gateRig is a gate over a hub on a temporary SQLite file, with a clock
// the test moves.
type gateRig struct {
	gate *Gate
	svc  *hub.Services
	db   *sqlite.DB

	clock *hub.FakeClock
}

func newGateRig(t *testing.T, mod func(*Options)) *gateRig {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := hub.DefaultConfig()
	cfg.AdminTokenHash = hub.HashToken(adminToken)
	svc := hub.NewServices(hub.NewCore(db, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	r := &gateRig{svc: svc, db: db, clock: hub.NewFakeClock(time.Unix(1_800_000_000, 0))}
	opts := DefaultOptions()
	opts.Clock = r.clock
	if mod != nil {
		mod(&opts)
	}
	r.gate = New(svc.Agents, opts)
	return r
}

func (r *gateRig) advance(d time.Duration) { r.clock.Advance(d) }

func (r *gateRig) agent(t *testing.T, name string) string {
	t.Helper()
	_, tok, err := r.svc.Agents.CreateAgent(context.Background(), hub.CreateAgentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func wantCode(t *testing.T, what string, err error, want codes.Code, says string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != want || !strings.Contains(st.Message(), says) {
		t.Errorf("%s: %v %q, want %v saying %q", what, st.Code(), st.Message(), want, says)
	}
}

func TestAdmitChecksTheCredentialTheTableNames(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, nil)
	ctx := context.Background()
	tok := r.agent(t, "alice")
	mark, list := hubv1.AgentService_MarkRead_FullMethodName, hubv1.AdminService_ListAgents_FullMethodName

	c, release, err := r.gate.Admit(ctx, mark, tok)
	a := c.Agent
	if err != nil || a == nil || a.Name != "alice" {
		t.Fatalf("alice's MarkRead: %v, %v; want admitted as alice", a, err)
	}
	release()
	_, _, err = r.gate.Admit(ctx, mark, "")
	wantCode(t, "no token", err, codes.Unauthenticated, "missing token")
	_, _, err = r.gate.Admit(ctx, mark, "ahk_unknown")
	wantCode(t, "unknown token", err, codes.Unauthenticated, "unknown or revoked token")
	_, _, err = r.gate.Admit(ctx, mark, adminToken)
	wantCode(t, "admin token on an agent call", err, codes.PermissionDenied, "the admin token was given")
	_, _, err = r.gate.Admit(ctx, list, tok)
	wantCode(t, "agent token on an admin call", err, codes.PermissionDenied, "an agent token was given")
	_, _, err = r.gate.Admit(ctx, list, "")
	wantCode(t, "no admin token", err, codes.Unauthenticated, "missing admin token")
	if c, _, err := r.gate.Admit(ctx, list, adminToken); err != nil || c.Agent != nil {
		t.Errorf("the admin's list: %v, %v; want admitted, no agent", a, err)
	}
	_, _, err = r.gate.Admit(ctx, "/hub.v1.AgentService/Unlisted", tok)
	wantCode(t, "a method without an entry", err, codes.PermissionDenied, "declares no admission")
	if _, err := r.svc.Agents.SetAgentDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.gate.Admit(ctx, mark, tok)
	wantCode(t, "a disabled agent", err, codes.PermissionDenied, "disabled")
}

// A store that cannot answer is no verdict on a token: Unavailable with a
// retry hint, never Unauthenticated (a client would take its token for
// revoked).
func TestStoreDownIsUnavailableNotUnauthenticated(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, nil)
	ctx := context.Background()
	tok := r.agent(t, "alice")
	if err := r.db.Close(); err != nil {
		t.Fatal(err)
	}
	err := r.gate.Precheck(ctx, Agent, tok, "")
	wantCode(t, "precheck, store closed", err, codes.Unavailable, "cannot reach its store")
	if RetryAfterSeconds(err) == "" {
		t.Errorf("precheck, store closed: no retry hint")
	}
	_, _, err = r.gate.Admit(ctx, hubv1.AgentService_GetStatus_FullMethodName, tok)
	wantCode(t, "admit, store closed", err, codes.Unavailable, "cannot reach its store")
	_, _, err = r.gate.Admit(ctx, hubv1.AdminService_ListAgents_FullMethodName, tok)
	wantCode(t, "admin call with an agent token, store closed", err, codes.Unavailable, "cannot reach its store")
}

// silentStore is a store whose reads get no answer while silent, as a
// database cut off by a partition: they end at their deadline.
type silentStore struct {
	hub.Store
	silent atomic.Bool
}

func (s *silentStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	if s.silent.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.View(ctx, fn)
}

// A call whose deadline passes before the store answers the token's read
// is no verdict on the token either: DeadlineExceeded, never
// Unauthenticated. The fault rig met "unknown or revoked token" for valid
// tokens on a replica cut off from PostgreSQL.
func TestStoreSilentIsNoVerdictOnTheToken(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := &silentStore{Store: db}
	cfg := hub.DefaultConfig()
	svc := hub.NewServices(hub.NewCore(store, hub.SystemClock{}, cfg, hub.NewWaiters(cfg.WaitLimits, hub.SystemClock{})))
	_, tok, err := svc.Agents.CreateAgent(context.Background(), hub.CreateAgentRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	gate := New(svc.Agents, DefaultOptions())
	store.silent.Store(true)
	for _, method := range []string{hubv1.AgentService_GetStatus_FullMethodName, hubv1.AdminService_ListAgents_FullMethodName} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, _, err := gate.Admit(ctx, method, tok)
		cancel()
		wantCode(t, method+" with the store silent past the call's deadline", err, codes.DeadlineExceeded, "deadline")
	}
}

func TestBudgetsByWeight(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, func(o *Options) { o.Read = RateLimit{PerSecond: 10, Burst: 10} })
	ctx := context.Background()
	tok := r.agent(t, "alice")
	status_, peers := hubv1.AgentService_GetStatus_FullMethodName, hubv1.AgentService_ListPeers_FullMethodName
	if _, _, err := r.gate.Admit(ctx, peers, tok); err != nil { // weight 5: 5 left
		t.Fatal(err)
	}
	for i := range 5 {
		if _, _, err := r.gate.Admit(ctx, status_, tok); err != nil {
			t.Fatalf("status %d within the burst: %v", i, err)
		}
	}
	_, _, err := r.gate.Admit(ctx, peers, tok)
	wantCode(t, "a list past the budget", err, codes.ResourceExhausted, "(this call counts 5)")
	if got := RetryAfterSeconds(err); got != "1" {
		t.Errorf("retry after %q, want 1 (5 reads at 10 a second)", got)
	}
	r.advance(500 * time.Millisecond)
	if _, _, err := r.gate.Admit(ctx, peers, tok); err != nil {
		t.Errorf("after half a second (5 reads back): %v", err)
	}
	// Writes are a budget of their own.
	if _, _, err := r.gate.Admit(ctx, hubv1.AgentService_Heartbeat_FullMethodName, tok); err != nil {
		t.Errorf("a write with the read budget spent: %v", err)
	}
}

func TestSearchSlots(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, func(o *Options) { o.SearchSlots, o.SearchQueue = 2, 50*time.Millisecond })
	ctx := context.Background()
	search := hubv1.AgentService_SearchMessages_FullMethodName
	a, b, c := r.agent(t, "a"), r.agent(t, "b"), r.agent(t, "c")

	_, relA, err := r.gate.Admit(ctx, search, a)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.gate.Admit(ctx, search, a)
	wantCode(t, "a second search of one caller", err, codes.ResourceExhausted, "a search of yours is still running")
	_, relB, err := r.gate.Admit(ctx, search, b)
	if err != nil {
		t.Fatal(err)
	}
	// c waits for a slot (its timer is set), up to the queue bound.
	cAdmit := func() (chan error, chan func()) {
		errs, rels := make(chan error, 1), make(chan func(), 1)
		timers := r.clock.Timers()
		go func() {
			_, rel, err := r.gate.Admit(ctx, search, c)
			errs <- err
			rels <- rel
		}()
		for r.clock.Timers() == timers {
			time.Sleep(time.Millisecond)
		}
		return errs, rels
	}
	errs, _ := cAdmit()
	r.clock.Advance(50 * time.Millisecond)
	wantCode(t, "a third search with two slots", <-errs, codes.ResourceExhausted, "busy with other searches")
	// A slot freed while c waits is taken.
	errs, rels := cAdmit()
	relB()
	if err := <-errs; err != nil {
		t.Fatalf("c, once b's search ended: %v", err)
	}
	relC := <-rels
	relA()
	relC()
	if _, rel, err := r.gate.Admit(ctx, search, a); err != nil {
		t.Errorf("a, once its search ended: %v", err)
	} else {
		rel()
	}
	// A cancelled caller stops waiting for a slot.
	_, rel1, _ := r.gate.Admit(ctx, search, a)
	_, rel2, _ := r.gate.Admit(ctx, search, b)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := r.gate.Admit(cctx, search, c); err == nil {
		t.Error("a cancelled search got a slot")
	}
	rel1()
	rel2()
}

// One address sending garbage codes spends its own join budget, and
// nothing of the hub-wide budget, which registrations take: joins with a
// usable code from another address go on. A code has a budget of its own.
func TestJoinBudgets(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, func(o *Options) {
		o.JoinSource = RateLimit{PerSecond: 1, Burst: 5}
		o.Join = RateLimit{PerSecond: 1, Burst: 3}
		o.JoinCode = RateLimit{PerSecond: 1, Burst: 4}
	})
	ctx := context.Background()
	_, code, err := r.svc.Agents.CreateJoinCode(ctx, hub.CreateJoinCodeRequest{MaxUses: 100})
	if err != nil {
		t.Fatal(err)
	}
	garbage := "ahj_" + strings.Repeat("g", 32)
	for i := range 100 {
		err := r.gate.CheckJoin(ctx, garbage+fmt.Sprint(i), "192.0.2.1:4000")
		if i < 5 {
			wantCode(t, "garbage within the source's burst", err, codes.Unauthenticated, "unknown join code")
		} else {
			wantCode(t, "garbage past the source's burst", err, codes.ResourceExhausted, "too many join attempts: the hub admits 1 per second from one address")
		}
	}
	for i := range 3 {
		if err := r.gate.CheckJoin(ctx, code, fmt.Sprintf("192.0.2.%d:5000", 10+i)); err != nil {
			t.Errorf("registration %d from another address during the garbage: %v", i, err)
		}
	}
	err = r.gate.CheckJoin(ctx, code, "192.0.2.20:5000")
	wantCode(t, "a registration past the hub-wide budget", err, codes.ResourceExhausted, "too many registrations: the hub admits 1 per second in all")
	err = r.gate.CheckJoin(ctx, code, "192.0.2.21:5000")
	wantCode(t, "past the code's own budget", err, codes.ResourceExhausted, "too many join attempts: the hub admits 1 per second with one join code")
	r.advance(time.Second)
	if err := r.gate.CheckJoin(ctx, code, "192.0.2.22:5000"); err != nil {
		t.Errorf("a second later: %v", err)
	}
	// IPv6 addresses of one /64 share a budget.
	if sourceKey("[2001:db8::1]:1") != sourceKey("[2001:db8::2]:2") || sourceKey("192.0.2.1:1") == sourceKey("192.0.2.2:1") {
		t.Errorf("source keys: %q %q %q %q", sourceKey("[2001:db8::1]:1"), sourceKey("[2001:db8::2]:2"), sourceKey("192.0.2.1:1"), sourceKey("192.0.2.2:1"))
	}
}

// People's calls take the admin token (as the operator) or a person
// token (as that person), never an agent's; the admin's own calls refuse
// a person token.
func TestPersonCallsTakeAPersonOrTheAdmin(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, nil)
	people := r.svc.People
	r.gate = New(r.svc.Agents, Options{People: people, Clock: r.clock})
	ctx := context.Background()
	_, personTok, err := people.CreatePerson(ctx, "pat", nil)
	if err != nil {
		t.Fatal(err)
	}
	agentTok := r.agent(t, "alice")
	answer, create := hubv1.AdminService_AnswerInboxItem_FullMethodName, hubv1.AdminService_CreateAgent_FullMethodName

	c, release, err := r.gate.Admit(ctx, answer, personTok)
	if err != nil || c.Person == nil || c.Person.Name != "pat" || c.Agent != nil {
		t.Fatalf("pat's answer: %+v, %v; want admitted as pat", c, err)
	}
	release()
	if c, _, err := r.gate.Admit(ctx, answer, adminToken); err != nil || c.Person != nil || c.Agent != nil {
		t.Errorf("the admin's answer: %+v, %v; want admitted as the operator", c, err)
	}
	_, _, err = r.gate.Admit(ctx, answer, agentTok)
	wantCode(t, "an agent answering the inbox", err, codes.PermissionDenied, "an agent may never answer the inbox")
	_, _, err = r.gate.Admit(ctx, create, personTok)
	wantCode(t, "a person creating an agent", err, codes.PermissionDenied, "a person token was given")
	_, _, err = r.gate.Admit(ctx, answer, "ahp_not-a-token")
	wantCode(t, "an unknown person token", err, codes.Unauthenticated, "unknown or revoked token")
	_, _, err = r.gate.Admit(ctx, answer, "")
	wantCode(t, "no token", err, codes.Unauthenticated, "missing token")
	// The REST guard's precheck knows a person token on any admin path;
	// Admit decides per call.
	if err := r.gate.Precheck(ctx, Admin, personTok, "127.0.0.1:1"); err != nil {
		t.Errorf("precheck of a person token on an admin path: %v", err)
	}
	if err := people.RevokePerson(ctx, "pat"); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.gate.Admit(ctx, answer, personTok)
	wantCode(t, "a revoked person token", err, codes.Unauthenticated, "unknown or revoked token")
}

// Every kind of caller an RPC admits is charged (a test that fails when
// one is not): an agent and a person from budgets of their own (a person's
// call on an entry that names none pays its writes), a joiner from the join
// budgets before there is a caller (Precheck); the admin token alone pays
// nothing, as the operator who sets the budgets.
func TestEveryCallerKindHasABudget(t *testing.T) {
	t.Parallel()
	ag := Caller{Agent: &hub.Agent{ID: 1, Name: "alice"}}
	pe := Caller{Person: &hub.Person{ID: 1, Name: "pat"}}
	joins := 0
	for _, fd := range []protoreflect.FileDescriptor{hubv1.File_hub_v1_agent_proto, hubv1.File_hub_v1_admin_proto} {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				method := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				rule, ok := Lookup(method)
				if !ok {
					continue // TestTableCoversEveryRPC says so
				}
				kinds := map[Who][]Caller{Agent: {ag}, Person: {pe}, Joiner: nil, Admin: nil}[rule.Who]
				if rule.Who == Joiner {
					joins++
				}
				for _, c := range kinds {
					if b, who, charged := budgetFor(rule, c); b == None || !charged || who.id != 1 {
						t.Errorf("%s made by %+v draws from %v (charged %v to %+v): every agent and person call needs a budget of its caller", method, c, b, charged, who)
					}
				}
				if _, _, charged := budgetFor(rule, Caller{}); charged {
					t.Errorf("%s made with the admin token is charged to a caller's budget", method)
				}
			}
		}
	}
	if joins == 0 {
		t.Fatal("no RPC admits a joiner: the join budgets below test nothing")
	}
	r := newGateRig(t, func(o *Options) { o.JoinSource = RateLimit{PerSecond: 1, Burst: 1} })
	_ = r.gate.Precheck(context.Background(), Joiner, "not-a-join-code", "127.0.0.1:1")
	err := r.gate.Precheck(context.Background(), Joiner, "not-a-join-code", "127.0.0.1:1")
	wantCode(t, "a second join attempt past the join budget", err, codes.ResourceExhausted, "join attempts")
}

// A person posting in a loop is stopped by its own budget, as an agent is,
// and spending it leaves an agent's budget whole.
func TestPersonHasABudgetOfItsOwn(t *testing.T) {
	t.Parallel()
	r := newGateRig(t, nil)
	r.gate = New(r.svc.Agents, Options{People: r.svc.People, Clock: r.clock, Write: RateLimit{PerSecond: 1, Burst: 3}})
	ctx := context.Background()
	_, personTok, err := r.svc.People.CreatePerson(ctx, "pat", nil)
	if err != nil {
		t.Fatal(err)
	}
	agentTok := r.agent(t, "alice")
	post := hubv1.AgentService_PostMessage_FullMethodName
	for i := range 3 {
		if _, _, err := r.gate.Admit(ctx, post, personTok); err != nil {
			t.Fatalf("post %d within pat's burst: %v", i, err)
		}
	}
	_, _, err = r.gate.Admit(ctx, post, personTok)
	wantCode(t, "a person's post past its budget", err, codes.ResourceExhausted, `person "pat" may make 1 writes per second`)
	if _, _, err := r.gate.Admit(ctx, hubv1.AgentService_PostMessage_FullMethodName, agentTok); err != nil {
		t.Errorf("alice's post with pat's budget spent: %v", err)
	}
	if _, _, err := r.gate.Admit(ctx, post, adminToken); err != nil {
		t.Errorf("the admin's post: %v", err)
	}
}
