package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/agenthub/hub/internal/hub"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Tokens is what the gate asks the hub about credentials.
type Tokens interface {
	// KnownToken reports whether token is the admin token or an agent's
	// (a disabled agent's included); an error means the store could not
	// tell.
	KnownToken(ctx context.Context, token string) (bool, error)
	// IsAdminToken reports whether token is the admin token.
	IsAdminToken(token string) bool
	// Authenticate returns the enabled agent holding token.
	// EUNAUTHORIZED, EPERMISSION (disabled), or the store's error.
	Authenticate(ctx context.Context, token string) (*hub.Agent, error)
	// CheckJoinCode reports why a join code cannot register an agent
	// (EUNAUTHORIZED, EPERMISSION), nil if it can.
	CheckJoinCode(ctx context.Context, code string) error
}

// PersonTokens is what the gate asks the hub about person tokens.
type PersonTokens interface {
	// AuthenticatePerson returns the person holding token: EUNAUTHORIZED
	// for no such token or a revoked one, or the store's error.
	AuthenticatePerson(ctx context.Context, token string) (*hub.Person, error)
}

// Caller is who a call acts as: an agent, a person, or the admin (both
// nil; a joiner's call too).
type Caller struct {
	Agent  *hub.Agent
	Person *hub.Person
}

// Options are the gate's budgets. A RateLimit with PerSecond ≤ 0 is off.
type Options struct {
	// People checks person tokens (nil: none is accepted).
	People              PersonTokens
	Write, Read, Search RateLimit // per agent, and per person (budgetFor)
	// SearchSlots is how many searches run at once in the whole hub
	// (default 2): the rest wait for a slot, up to SearchQueue.
	SearchSlots int
	SearchQueue time.Duration // default 2 s
	// Join is the hub-wide budget of join attempts; JoinSource the
	// budget of one source address, taken first; JoinCode the budget of
	// attempts with one code.
	Join, JoinSource, JoinCode RateLimit
	// Clock is the clock of the budgets and of the wait for a search
	// slot (the system clock when nil).
	Clock hub.Clock
}

// DefaultOptions returns the hub's default budgets.
func DefaultOptions() Options {
	return Options{
		Write: DefaultWriteLimit, Read: DefaultReadLimit, Search: DefaultSearchLimit,
		SearchSlots: 2, SearchQueue: 2 * time.Second,
		Join: DefaultJoinLimit, JoinSource: DefaultJoinSourceLimit, JoinCode: DefaultJoinCodeLimit,
	}
}

// Gate admits calls: every entry point asks it, with the same rules and
// the same refusal texts.
type Gate struct {
	tokens Tokens
	opts   Options
	clock  hub.Clock

	budgets  [Search + 1]*buckets[principal] // by Budget, per agent or person
	searches *searchSlots
	join     *buckets[struct{}]
	source   *buckets[string]
	code     *buckets[string]
}

// New returns a gate over tokens with the budgets of opts.
func New(tokens Tokens, opts Options) *Gate {
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	g := &Gate{tokens: tokens, opts: opts, clock: opts.Clock}
	g.budgets[Write] = newBuckets[principal](opts.Write)
	g.budgets[Read] = newBuckets[principal](opts.Read)
	g.budgets[Search] = newBuckets[principal](opts.Search)
	g.searches = newSearchSlots(opts.SearchSlots, opts.SearchQueue, opts.Clock)
	g.join = newBuckets[struct{}](opts.Join)
	g.source = newBuckets[string](opts.JoinSource)
	g.code = newBuckets[string](opts.JoinCode)
	return g
}

// Refusal texts: what a caller is told, and what to do about it.
const (
	textMissingAgent  = `missing token: send "authorization: Bearer <agent token>" (create one with ` + "`hubctl agent add NAME`)"
	textMissingAdmin  = `missing admin token: send "authorization: Bearer <admin token>" (the hub writes it to <data-dir>/admin.token)`
	textUnknownAgent  = "unknown or revoked token: check HUB_TOKEN (rotate it with `hubctl agent token rotate NAME`)"
	textUnknownAdmin  = "unknown admin token: use the token in <data-dir>/admin.token"
	textAdminOnAgent  = "this call acts as an agent and needs that agent's token; the admin token was given (create an agent with `hubctl agent add NAME`)"
	textAgentOnAdmin  = "this call needs the admin token; an agent token was given (the admin token is in <data-dir>/admin.token)"
	textMissingPerson = `missing token: send "authorization: Bearer <person token or admin token>" (an admin creates a person token with ` + "`hubctl people add NAME`)"
	textUnknownPerson = "unknown or revoked token: use a person token (`hubctl people add NAME` makes one) or the admin token"
	textPersonOnAdmin = "this call administers the hub and needs the admin token; a person token was given (a person may answer the inbox, read and post)"
	textAgentOnPerson = "this call is for people: it needs a person token or the admin token; an agent token was given (an agent may never answer the inbox, not even its own requests)"
	textMissingAny    = `missing token: send "authorization: Bearer <token>" with an agent's token (` + "`hubctl agent add NAME`)" + `, a person's (` + "`hubctl people add NAME`)" + ` or the admin token (<data-dir>/admin.token)`
	textMissingJoin   = `missing join code: send "authorization: Bearer <join code>" (an admin creates one with ` + "`hubctl join-codes create`)"
	textStoreDown     = "the hub cannot reach its store to check the token: retry shortly (this is not a refusal of the token)"
	textNoRule        = "method %s declares no admission: no caller may make it"
	retryAfterStoreMs = 1000
)

// maxTokenLen bounds the bearer token the hub will look up: hub tokens
// are far shorter, and a longer one is refused without a store read.
const maxTokenLen = 256

// Refusal is a refused call: its gRPC status, and when a retry can
// succeed (0 when waiting does not help).
type Refusal struct {
	st         *status.Status
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.st.Err().Error() }

// GRPCStatus makes a Refusal a gRPC status error (status.FromError).
func (r *Refusal) GRPCStatus() *status.Status { return r.st }

// RetryAfterSeconds returns the whole seconds a refusal asks the caller
// to wait ("" when err is not a refusal to wait on): the value of the
// retry-after trailer and of REST's Retry-After header.
func RetryAfterSeconds(err error) string {
	var r *Refusal
	if !errors.As(err, &r) || r.RetryAfter <= 0 {
		return ""
	}
	return strconv.Itoa(max(1, int(math.Ceil(r.RetryAfter.Seconds()))))
}

func refuse(c codes.Code, msg string) error { return &Refusal{st: status.New(c, msg)} }

func refuseFor(c codes.Code, wait time.Duration, msg string) error {
	return &Refusal{st: status.New(c, msg), RetryAfter: wait}
}

// Precheck is the check of a call made from its headers alone, before its
// body is read or a handler runs (the gRPC tap, the REST guard, MCP over
// HTTP): the token must be known (one indexed read at most, cached), a
// join code must pass the join budgets and be usable. A caller without a
// valid credential costs the hub a few KB. The full check is Admit.
func (g *Gate) Precheck(ctx context.Context, who Who, token, source string) error {
	if who == Joiner {
		return g.CheckJoin(ctx, token, source)
	}
	if token == "" {
		return refuse(codes.Unauthenticated, missingText(who))
	}
	// A person token is known on every call a person or the admin may
	// make: Admit then says whether this call takes it.
	if who.Has(Person|Admin) && len(token) <= maxTokenLen && g.opts.People != nil {
		if _, err := g.opts.People.AuthenticatePerson(ctx, token); err == nil {
			return nil
		} else if unreachable(err) {
			return refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
		}
	}
	if len(token) <= maxTokenLen {
		ok, err := g.tokens.KnownToken(ctx, token)
		if err != nil {
			return refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
		}
		if ok {
			return nil
		}
	}
	switch {
	case who.Has(Agent):
		return refuse(codes.Unauthenticated, textUnknownAgent)
	case who.Has(Person):
		return refuse(codes.Unauthenticated, textUnknownPerson)
	}
	return refuse(codes.Unauthenticated, textUnknownAdmin)
}

// missingText is the refusal of a call of who without a token.
func missingText(who Who) string {
	switch who {
	case Admin:
		return textMissingAdmin
	case Person:
		return textMissingPerson
	case Agent:
		return textMissingAgent
	}
	return textMissingAny
}

// Authorize is the full check of a credential for a caller of kind who:
// the admin token for Admin, an enabled agent's token for Agent (the
// agent), the admin token or a person's for Person (the person, none for
// the admin). When who names several kinds, the token says which one the
// call is: an agent's token acts as the agent, the admin token as the
// admin, a person's as the person. Joiner calls carry a code, checked by
// CheckJoin.
func (g *Gate) Authorize(ctx context.Context, who Who, token string) (Caller, error) {
	switch who {
	case Person:
		p, err := g.authorizePerson(ctx, token)
		return Caller{Person: p}, err
	case Agent, Admin:
		a, err := g.authorize(ctx, who, token)
		return Caller{Agent: a}, err
	}
	if token == "" {
		return Caller{}, refuse(codes.Unauthenticated, missingText(who))
	}
	if who.Has(Person|Admin) && g.tokens.IsAdminToken(token) {
		return Caller{}, nil
	}
	if !who.Has(Agent) {
		return g.Authorize(ctx, Person, token)
	}
	c, err := g.Authorize(ctx, Agent, token)
	if err == nil || status.Code(err) != codes.Unauthenticated {
		return c, err
	}
	if who.Has(Person) {
		return g.Authorize(ctx, Person, token)
	}
	// A person's token on a call of agents and the admin.
	if _, perr := g.authorize(ctx, Admin, token); status.Code(perr) == codes.PermissionDenied {
		return Caller{}, perr
	}
	return Caller{}, err
}

// AuthorizeFor is Authorize for the callers the admission of method names
// (a full method name, "/hub.v1.AgentService/GetStatus"): the entry points
// that are no RPC (a stream, a session) admit as the RPC they stand for.
func (g *Gate) AuthorizeFor(ctx context.Context, method, token string) (Caller, error) {
	rule, ok := Lookup(method)
	if !ok {
		return Caller{}, refuse(codes.PermissionDenied, fmt.Sprintf(textNoRule, method))
	}
	return g.Authorize(ctx, rule.Who, token)
}

// authorizePerson is Authorize for Person: the admin token (nil person)
// or a person token.
func (g *Gate) authorizePerson(ctx context.Context, token string) (*hub.Person, error) {
	if token == "" {
		return nil, refuse(codes.Unauthenticated, textMissingPerson)
	}
	if g.tokens.IsAdminToken(token) {
		return nil, nil
	}
	if len(token) > maxTokenLen {
		return nil, refuse(codes.Unauthenticated, textUnknownPerson)
	}
	if g.opts.People != nil {
		p, err := g.opts.People.AuthenticatePerson(ctx, token)
		switch {
		case err == nil:
			return p, nil
		case unreachable(err):
			return nil, refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
		}
	}
	if _, err := g.tokens.Authenticate(ctx, token); err == nil {
		return nil, refuse(codes.PermissionDenied, textAgentOnPerson)
	} else if unreachable(err) {
		return nil, refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
	}
	return nil, refuse(codes.Unauthenticated, textUnknownPerson)
}

// authorize is Authorize for Admin and Agent.
func (g *Gate) authorize(ctx context.Context, who Who, token string) (*hub.Agent, error) {
	switch who {
	case Admin:
		if token == "" {
			return nil, refuse(codes.Unauthenticated, textMissingAdmin)
		}
		if g.tokens.IsAdminToken(token) {
			return nil, nil
		}
		if g.opts.People != nil && len(token) <= maxTokenLen {
			if _, err := g.opts.People.AuthenticatePerson(ctx, token); err == nil {
				return nil, refuse(codes.PermissionDenied, textPersonOnAdmin)
			}
		}
		if len(token) <= maxTokenLen {
			if _, err := g.tokens.Authenticate(ctx, token); err == nil {
				return nil, refuse(codes.PermissionDenied, textAgentOnAdmin)
			} else if unanswered(err) {
				return nil, Status(err)
			} else if unreachable(err) {
				return nil, refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
			}
		}
		return nil, refuse(codes.Unauthenticated, textUnknownAdmin)
	case Agent:
		if token == "" {
			return nil, refuse(codes.Unauthenticated, textMissingAgent)
		}
		if len(token) > maxTokenLen {
			return nil, refuse(codes.Unauthenticated, textUnknownAgent)
		}
		// The admin token is no agent's token: it is told apart only when
		// the agent check fails, so an agent's call hashes its token once.
		a, err := g.tokens.Authenticate(ctx, token)
		switch {
		case err == nil:
			return a, nil
		case hub.ErrorCode(err) == hub.EPERMISSION:
			return nil, refuse(codes.PermissionDenied, hub.ErrorMessage(err))
		case unanswered(err):
			return nil, Status(err)
		case unreachable(err):
			return nil, refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, textStoreDown)
		case g.tokens.IsAdminToken(token):
			return nil, refuse(codes.PermissionDenied, textAdminOnAgent)
		}
		return nil, refuse(codes.Unauthenticated, textUnknownAgent)
	}
	return nil, refuse(codes.PermissionDenied, "this call cannot be made with a token")
}

// unanswered reports whether the call ended (its deadline passed, it was
// cancelled) before the store answered: no verdict on the token either,
// answered DeadlineExceeded or Canceled.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// unreachable reports whether err is the store failing (an error the
// domain did not make, or its EUNAVAILABLE) rather than a verdict.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	c := hub.ErrorCode(err)
	return c == hub.EINTERNAL || c == hub.EUNAVAILABLE
}

// Admit is the full check of an RPC before its handler runs: the method
// must be in the table; the credential must be the one its rule names
// (Authorize); the caller's budget must hold the call's weight; a search
// takes a search slot, which release gives back when the call ends
// (release is never nil when err is nil). It returns who calls: the
// agent, the person, or neither for the admin and for a join.
func (g *Gate) Admit(ctx context.Context, method, token string) (c Caller, release func(), err error) {
	rule, ok := Lookup(method)
	if !ok {
		return c, nil, refuse(codes.PermissionDenied, fmt.Sprintf(textNoRule, method))
	}
	return g.AdmitRule(ctx, rule, token)
}

// AdmitRule is Admit for a call that is no RPC, under its own rule (the
// OTLP receiver's, OTLPExport).
func (g *Gate) AdmitRule(ctx context.Context, rule Rule, token string) (c Caller, release func(), err error) {
	if rule.Who != Joiner {
		if c, err = g.Authorize(ctx, rule.Who, token); err != nil {
			return Caller{}, nil, err
		}
	}
	release = func() {}
	budget, who, charged := budgetFor(rule, c)
	if budget == None {
		return c, release, nil
	}
	if charged {
		if err := g.take(who, budget, rule.Weight); err != nil {
			return c, nil, err
		}
	}
	if budget == Search {
		var id int64 = -1 // the admin
		if c.Agent != nil {
			id = c.Agent.ID
		}
		if release, err = g.searches.acquire(ctx, id); err != nil {
			return c, nil, err
		}
	}
	return c, release, nil
}

// principal keys a caller's buckets: agents and people have budgets of
// their own, whatever their IDs.
type principal struct {
	kind Who // Agent or Person
	id   int64
	name string // for the refusal's text
}

// budgetFor is the one rule of which budget a call draws from and whose
// bucket pays: an agent pays the rule's budget; a person pays the rule's,
// or its writes when the rule names none (answers, posts and the
// dashboard's reads, at the agents' write rate); the admin token pays none
// (charged false: it is the operator's, who sets the budgets; a search
// still takes a slot). A join is charged by the join budgets in Precheck,
// before there is a caller.
func budgetFor(rule Rule, c Caller) (budget Budget, who principal, charged bool) {
	switch {
	case c.Agent != nil:
		return rule.Budget, principal{Agent, c.Agent.ID, c.Agent.Name}, true
	case c.Person != nil:
		if rule.Budget == None {
			return Write, principal{Person, c.Person.ID, c.Person.Name}, true
		}
		return rule.Budget, principal{Person, c.Person.ID, c.Person.Name}, true
	}
	return rule.Budget, principal{}, false
}

// take takes weight tokens of budget from who's bucket.
func (g *Gate) take(who principal, budget Budget, weight int) error {
	b := g.budgets[budget]
	wait := b.take(who, weight, g.clock.Now())
	if wait <= 0 {
		return nil
	}
	flags := map[Budget]string{Write: "--rate-limit and --rate-burst", Read: "--read-rate-limit and --read-rate-burst", Search: "--search-rate-limit and --search-rate-burst"}[budget]
	counts := ""
	if weight > 1 {
		counts = fmt.Sprintf(" (this call counts %d)", weight)
	}
	return refuseFor(codes.ResourceExhausted, wait, fmt.Sprintf(
		"rate limit: %s %q may make %s %s per second (bursts of %d)%s; retry in %s (the hub's %s set this)",
		who.kind, who.name, strconv.FormatFloat(b.cfg.PerSecond, 'f', -1, 64), budget, b.cfg.Burst, counts, wait.Round(time.Millisecond), flags))
}
