package hub

import (
	"context"
	"sync"
	"time"
)

// Waits is the service of the long poll (WaitForMessages) and of the
// fallback watcher that wakes waits for writes made outside this process.
type Waits struct {
	*core
	store    txs[waitsTx]  // the store methods it uses
	liveness statusReader  // a wait's reply carries the caller's status
	receipts waitReceipts  // and marks what it hands out delivered
	poke     chan struct{} // Poke: the fallback watcher looks now

	// watchFrom is the newest message ID when Init ran: the fallback
	// watcher's starting point (see Run). Set before Run starts.
	watchFrom   int64
	watchInited bool
	// watched is the newest message ID whose recipients the watcher has
	// woken (by a look or a report, PostedTo); valid once watching.
	watchMu  sync.Mutex
	watched  int64
	watching bool
}

// waitsTx is what the waits service reads and writes in one transaction:
// the store methods it uses, by their group.
type waitsTx interface {
	// AgentTx
	AgentByID(id int64) (*Agent, error)
	AgentByTokenHash(hash []byte) (*Agent, error)
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// MessageTx
	LookInbox(agentID, after int64, fromReadCursor bool, limit int) (InboxLook, error)
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	MaxMessageID() (int64, error)
	RecipientsAfter(after int64) ([]int64, error)
}

// statusReader reads an agent's status (satisfied by *Liveness).
type statusReader interface {
	Status(ctx context.Context, caller *Agent) (*Status, error)
}

// waitReceipts is what waits and streams need of the receipts (satisfied
// by *Receipts; receipt_log_service.go): the marks of what a reply handed
// out, written in batches by Run when MarksPending says so, what each
// path may carry, and a path's confirmations.
type waitReceipts interface {
	replyMarker
	pathCarrier
	FlushDeliveries(ctx context.Context) error
	FlushLast(ctx context.Context) error
	MarksPending() <-chan struct{}
	Hold(ctx context.Context, agentID int64, ids []int64) error
	Settle(ctx context.Context, agentID int64, ids []int64, via Via, now time.Time) error
	Confirm(ctx context.Context, caller *Agent, ids []string, via string) error
}

// NewWaits returns the waits' service.
func NewWaits(c *Core, liveness statusReader, receipts waitReceipts) *Waits {
	return &Waits{core: c.core, store: txsOf[waitsTx](c.store), liveness: liveness, receipts: receipts, poke: make(chan struct{}, 1)}
}

// Init reads the newest message ID, from which the fallback watcher starts.
func (s *Waits) Init(ctx context.Context) error {
	return view(ctx, s.store, func(tx waitsTx) (err error) {
		s.watchFrom, err = tx.MaxMessageID()
		s.watchInited = err == nil
		return err
	})
}

// Run runs the fallback watcher until ctx ends: every PollInterval, and at
// once after each Poke, it looks for messages committed by someone other
// than this process (another hub replica, a manual edit) and wakes their
// recipients. Its cost is one or two indexed queries per look, whatever the
// number of parked waits. It also writes the delivery marks of the replies
// this process sent (markDelivered), in one transaction per batch.
func (s *Waits) Run(ctx context.Context) error {
	// The delivery marks of the replies sent are written here too, and
	// those still pending when ctx ends are written before Run returns;
	// after it each is written by the call that records it (the servers
	// finish their calls before the store closes).
	defer s.receipts.FlushLast(context.WithoutCancel(ctx))
	if s.cfg.PollOnly {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-s.receipts.MarksPending():
				s.receipts.FlushDeliveries(ctx)
			}
		}
	}
	// Start from where Init looked, before any wait could park: reading the
	// high-water mark here instead would race with the first waits, and an
	// outside write landing in between would never wake them.
	last := s.watchFrom
	if !s.watchInited {
		if err := view(ctx, s.store, func(tx waitsTx) (err error) { last, err = tx.MaxMessageID(); return err }); err != nil && ctx.Err() == nil {
			return err
		}
	}
	s.watchMu.Lock()
	s.watched, s.watching = last, true
	s.watchMu.Unlock()
	var tick <-chan time.Time
	if s.cfg.PollInterval > 0 {
		t := s.clock.NewTicker(s.cfg.PollInterval)
		defer t.Stop()
		tick = t.C()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		case <-s.poke:
		case <-s.receipts.MarksPending():
			s.receipts.FlushDeliveries(ctx) // on failure the marks wait for the next kick
			continue
		}
		s.pollOnce(ctx)
		s.receipts.FlushDeliveries(ctx) // marks left by a failed write (none: no store call)
	}
}

// Poke makes the fallback watcher look for new messages now rather than at
// its next interval. A store shared by several hub processes calls it when
// another process reports a post without saying to whom (PostgreSQL: a
// NOTIFY whose recipients did not fit); pokes that arrive while the watcher
// looks are folded into its next look.
func (s *Waits) Poke() {
	select {
	case s.poke <- struct{}{}:
	default: // a look is already pending
	}
}

// PostedTo wakes the parked waits of agentIDs, the recipients of the
// messages first to last that another process reports it committed
// (PostgreSQL: the posting transaction's NOTIFY), without reading the
// store: the woken waits read their messages themselves. The watcher counts
// the messages as seen when they follow those it has seen; when they do
// not (a report was lost, or this one came early), it also looks (Poke),
// so that the recipients of the messages in between are woken too. A
// report is only a hint: repeated, stale or out-of-order reports wake
// waits that then find nothing, and never keep one parked.
func (s *Waits) PostedTo(first, last int64, agentIDs []int64) {
	s.wake(&Changes{agents: agentIDs})
	s.watchMu.Lock()
	follows := s.watching && first <= s.watched+1
	if follows {
		s.watched = max(s.watched, last)
	}
	s.watchMu.Unlock()
	if !follows {
		s.Poke()
	}
}

// RecheckWaits ends the parked waits whose token no longer holds their
// agent, or whose agent is disabled, with the errors a reported change
// gives (AgentChanged); then it wakes every other parked wait once, so
// that each checks the store again, pokes the watcher and returns how many
// agents' waits it woke. A store calls it when its reports of other
// processes' changes were interrupted (a dropped connection), since any of
// them may have been lost.
func (s *Waits) RecheckWaits() int {
	s.recheckTokens()
	ids := s.waiters.Agents()
	s.wake(&Changes{agents: ids})
	s.Poke()
	return len(ids)
}

// recheckTokens checks, in one read, every token parked waits were
// authenticated with, and revokes the waits of the agents whose token was
// rotated or revoked, or who were disabled. If the store cannot be read,
// the waits stay parked (they end at their timeout, and a later reported
// change still ends them).
func (s *Waits) recheckTokens() {
	parked := s.waiters.ParkedTokens()
	if len(parked) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends := map[int64]error{}
	err := view(ctx, s.store, func(tx waitsTx) error {
		clear(ends)
		for id, hashes := range parked {
			for _, h := range hashes {
				a, err := tx.AgentByTokenHash(h)
				switch {
				case ErrorCode(err) == ENOTFOUND || err == nil && a.ID != id:
					ends[id] = errRevoked()
				case err != nil:
					return err
				case a.Disabled():
					ends[id] = errDisabledWhileWaiting()
				}
				if ends[id] != nil {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for id, err := range ends {
		s.waiters.Revoke(AgentPrincipal(id), err)
	}
}

// pollOnce wakes the recipients of the messages above the watcher's mark
// and moves the mark to the newest. Errors are retried at the next
// interval.
func (s *Waits) pollOnce(ctx context.Context) {
	s.watchMu.Lock()
	last := s.watched
	s.watchMu.Unlock()
	var newest int64
	var ids []int64
	err := view(ctx, s.store, func(tx waitsTx) (err error) {
		if newest, err = tx.MaxMessageID(); err != nil || newest <= last {
			return err
		}
		ids, err = tx.RecipientsAfter(last)
		return err
	})
	if err != nil || newest <= last {
		return
	}
	s.watchMu.Lock()
	s.watched = max(s.watched, newest)
	s.watchMu.Unlock()
	s.wake(&Changes{agents: ids})
}

// Wait is the long-poll behind WaitForMessages (SPEC §5): Begin, Park and
// Finish in a row. It returns at once if the caller has unread messages
// (or, given AfterID, messages after it); otherwise it parks until a
// message arrives, the timeout ends or ctx ends. A timeout is a normal
// reply with TimedOut set, given a little before the caller's own deadline
// when ctx has one. Errors: those of Begin, EPERMISSION (agent disabled
// meanwhile), EUNAUTHORIZED (token revoked meanwhile), ctx.Err().
func (s *Waits) Wait(ctx context.Context, caller *Agent, req WaitRequest) (*WaitResult, error) {
	w, err := s.Begin(ctx, caller, req)
	if err != nil {
		return nil, err
	}
	w.Park(ctx)
	return w.Finish(ctx)
}

// A Wait is one WaitForMessages call in its phases: Begin checks the
// request, places its cursor, looks once and registers the wait; Park
// blocks until it should look again; Finish answers. Only the gRPC handler
// calls them apart: a parked call keeps its goroutine's stack at the size
// it grew to, so it runs Begin on a goroutine of its own and parks at the
// bottom of the call's stack, within 4 KiB, where parked under the
// interceptors it would hold 8 (hubbench's memory scenario).
type Wait struct {
	s      *Waits
	caller *Agent
	start  time.Time
	plan   waitPlan
	w      *Waiter     // registered; nil for a peek or once the first look found messages
	woken  time.Time   // when Park was woken by a post (zero: it was not)
	found  *WaitResult // the first look's reply, when it needs no park
	// open: the wait counts as an open path of its caller
	// (reachability.go) until Close; gone: its caller went away.
	open, gone bool
}

// Begin checks req, places the wait's cursor, registers the wait (before
// looking: a message committed after the look wakes it) and looks once.
// When the look finds messages, or the wait is a peek, the wait holds its
// reply and Finish gives it without reading the store again. Close the
// wait if Finish is not called. Errors: EINVALID, ENOTFOUND (an unknown
// after_id), EEXHAUSTED (too many parked waits), EUNAUTHORIZED (the token
// was revoked), EPERMISSION (agent disabled), the store's.
func (s *Waits) Begin(ctx context.Context, caller *Agent, req WaitRequest) (*Wait, error) {
	start := s.clock.Now()
	plan, err := s.planWait(ctx, caller, req, start)
	if err != nil {
		return nil, err
	}
	wt := &Wait{s: s, caller: caller, start: start, plan: plan}
	if plan.timeout > 0 {
		if wt.w, err = s.waiters.Register(caller.ID, caller.authEpoch, caller.authHash); err != nil {
			return nil, err
		}
		// The timeout, like a wake-up, a revocation and the hub's
		// shutdown, comes through the waiter's one channel: a parked wait
		// blocks on that and its context only. Close takes it off the
		// timeouts.
		wt.w.expireAfter(plan.timeout)
		s.paths.Open(caller.ID, plan.path(), start)
		wt.open = true
	}
	lk, err := plan.fetch()
	if err == nil {
		// Checked after the read: a message posted after a revocation is
		// never handed to the revoked token.
		err = revokedErr(wt.w)
	}
	switch {
	case err != nil:
		wt.gone = true
		wt.Close()
		return nil, err
	case lk.found():
		wt.Close()
		wt.found = &WaitResult{Messages: lk.msgs, Cursor: lk.cursor}
	case wt.w == nil:
		// A peek (or no time left before the caller's deadline): nothing
		// arrived, which is a timeout like any other.
		wt.found = &WaitResult{Cursor: lk.cursor, TimedOut: true}
	}
	return wt, nil
}

// Park blocks until the wait should look again (a wake-up, a revocation,
// its timeout, the hub stopping) or ctx ends; it returns at once when
// Begin found the reply, or in poll mode (Finish polls). It reads nothing.
func (wt *Wait) Park(ctx context.Context) {
	s := wt.s
	if wt.found != nil || s.cfg.PollOnly || wt.w.expired.Load() || s.stopping() {
		return
	}
	select {
	case <-wt.w.c:
		if revokedErr(wt.w) == nil && !wt.w.expired.Load() && !s.stopping() {
			wt.woken = s.clock.Now()
		}
	case <-ctx.Done():
	}
}

// Finish answers the wait: the reply Begin found, or what a look finds
// after Park (parking again after a wake-up that brought nothing for the
// caller, until its timeout). It marks what it hands out delivered and
// adds the caller's status. The wait is closed when it returns.
func (wt *Wait) Finish(ctx context.Context) (*WaitResult, error) {
	defer func() {
		wt.gone = wt.gone || ctx.Err() != nil // the caller went away
		wt.Close()
	}()
	s := wt.s
	res, wokenAt := wt.found, wt.woken
	if res == nil {
		if err := ctx.Err(); err != nil {
			return nil, err // the call ended while parked
		}
		var woken time.Time
		var err error
		if res, woken, err = s.park(ctx, wt.plan.fetch, wt.w); err != nil {
			return nil, err
		}
		if !woken.IsZero() {
			wokenAt = woken
		}
	}
	if err := s.receipts.MarkReply(ctx, wt.caller.ID, res.Messages, wt.plan.via); err != nil {
		return nil, err
	}
	SortByPriority(res.Messages)
	now := s.clock.Now()
	res.Waited = now.Sub(wt.start)
	var latency time.Duration
	if !wokenAt.IsZero() {
		latency = now.Sub(wokenAt)
	}
	s.metrics.WaitEnded(res.Waited, res.TimedOut, latency)
	var err error
	if res.Status, err = s.liveness.Status(ctx, wt.caller); err != nil {
		return nil, err
	}
	return res, nil
}

// Close unregisters the wait and ends its path; it is idempotent.
func (wt *Wait) Close() {
	if wt.w != nil {
		wt.w.Close()
	}
	if wt.open {
		wt.open = false
		wt.s.paths.Close(wt.caller.ID, wt.plan.path(), wt.s.clock.Now(), wt.gone)
	}
}

// waitPlan is what a wait will do: park up to timeout (zero: only look),
// looking with fetch; via is the path it feeds (ViaWait: the agent's own).
type waitPlan struct {
	timeout time.Duration
	via     Via
	fetch   func() (look, error)
}

// path is the kind of path the wait is, for reachability.
func (p waitPlan) path() Via { return p.via }

// look is what one look of a wait found: the messages to hand out and the
// cursor past what it read; passed: it read messages that its path passes
// over (Receipts.HandOut), so the wait answers, moving its cursor past
// them, rather than parking.
type look struct {
	msgs   []*Message
	cursor int64
	passed bool
	more   bool // the look read a full page: more may follow its cursor
}

// found reports whether the look ends the wait.
func (l look) found() bool { return len(l.msgs) > 0 || l.passed }

// planWait checks req and decides how long a wait that started at start
// may park. Errors: EINVALID, ENOTFOUND (an unknown after_id).
func (s *Waits) planWait(ctx context.Context, caller *Agent, req WaitRequest, start time.Time) (waitPlan, error) {
	after, err := ParseMessageID("after_id", req.AfterID)
	if err != nil {
		return waitPlan{}, err
	}
	via, err := ParseVia("via", req.Via, ViaChannel, ViaTmux)
	if err != nil {
		return waitPlan{}, err
	}
	if via == 0 {
		via = ViaWait
	}
	limit, err := s.limit(req.Limit, 20)
	if err != nil {
		return waitPlan{}, err
	}
	// The store reads of a wait are detached from ctx's cancellation
	// (detachedRead), so that the parked call holds no record of them; the
	// wait itself still ends at once when ctx ends (parkUntil).
	if after > 0 {
		// On its own stack like every store read of a wait (onOwnStack).
		check := onOwnStack(s.warm, func() (look, error) {
			rctx, cancel := detachedRead(ctx)
			defer cancel()
			return look{}, view(rctx, s.store, func(tx waitsTx) error { return checkCursor(tx, "after_id", after) })
		})
		if _, err := check(); err != nil {
			return waitPlan{}, err
		}
	}
	deadline, _ := ctx.Deadline()
	budget := waitBudget{Default: s.cfg.WaitDefault, Max: s.cfg.WaitMax, Margin: s.cfg.DeadlineMargin}
	timeout, err := budget.park(req.TimeoutSeconds, start, deadline)
	if err != nil {
		return waitPlan{}, err
	}
	fetch := func() (look, error) {
		rctx, cancel := detachedRead(ctx)
		defer cancel()
		return s.fetchForWait(rctx, caller.ID, after, req.AfterID != "", limit, via)
	}
	return waitPlan{timeout: timeout, via: via, fetch: onOwnStack(s.warm, fetch)}, nil
}

// onOwnStack returns read run on another goroutine, a warm one of w. A
// parked wait (or stream) keeps its goroutine's stack at whatever size the
// call grew it to, and a store read (database/sql and the SQLite driver)
// grows it past 8 KiB: run on the call's goroutine, it would leave every
// parked wait holding 16 KiB of stack instead of 8 (hubbench's memory
// scenario, 10,000 parked: 18.7 against 10.7 KiB of stacks per waiter).
// The hand-over costs about a microsecond per read.
func onOwnStack[T any](w *warmSet, read func() (T, error)) func() (T, error) {
	return func() (T, error) {
		var v T
		var err error
		done := make(chan struct{})
		w.Go(func() {
			defer close(done)
			v, err = read()
		})
		<-done
		return v, err
	}
}

// park looks with fetch until it finds messages, parking the registered
// wait w in between, up to its timeout (or, with PollOnly, polling), and
// ends at once if the caller's token is revoked. It looks first, as Park
// parked before (but in poll mode). It returns when it was last woken,
// for the wake latency metric.
func (s *Waits) park(ctx context.Context, fetch func() (look, error), w *Waiter) (_ *WaitResult, wokenAt time.Time, _ error) {
	var poll <-chan time.Time
	if s.cfg.PollOnly {
		t := s.clock.NewTicker(s.cfg.PollInterval)
		defer t.Stop()
		poll = t.C()
	}
	for parked := !s.cfg.PollOnly; ; parked = false {
		last := false
		if !parked {
			again, woken, err := s.parkUntil(ctx, w, poll)
			if err != nil {
				return nil, wokenAt, err
			}
			if !woken.IsZero() {
				wokenAt = woken
			}
			last = !again
		}
		lk, err := fetch()
		if err != nil {
			return nil, wokenAt, err
		}
		if err := revokedErr(w); err != nil {
			return nil, wokenAt, err
		}
		// Once the wait ended (its timeout, the hub stopping), this was
		// the last look: a message may have committed as the timeout passed.
		if lk.found() || last || w.expired.Load() || s.stopping() {
			return &WaitResult{Messages: lk.msgs, Cursor: lk.cursor, TimedOut: !lk.found()}, wokenAt, nil
		}
	}
}

// parkUntil blocks a registered wait w until it should look again (again:
// a wake-up, woken then, or in poll mode a poll tick) or end (its timeout
// passed, or the hub is stopping: a normal timed-out reply after one last
// look, so that the client simply waits again on the next hub). It returns
// an error when the caller's token was revoked (w.Err) or ctx ended.
func (s *Waits) parkUntil(ctx context.Context, w *Waiter, poll <-chan time.Time) (again bool, woken time.Time, _ error) {
	for {
		// Looked at before blocking too: Shutdown wakes only the waits
		// registered when it runs, and a wait registered after that sees
		// its closed channel here.
		if w.expired.Load() || s.stopping() {
			return false, woken, nil
		}
		select {
		case <-w.c:
			if err := revokedErr(w); err != nil {
				return false, woken, err
			}
			if w.expired.Load() || s.stopping() {
				return false, woken, nil
			}
			if poll != nil {
				continue // poll mode: only the polls look again
			}
			return true, s.clock.Now(), nil
		case <-poll:
			return true, woken, nil
		case <-ctx.Done():
			return false, woken, ctx.Err()
		}
	}
}

// fetchForWait returns the caller's messages after its cursor (or its read
// cursor, when useAfter is false) and the cursor to hand back; for a path's
// wait (via a path that confirms), only those the path carries
// (Receipts.HandOut), the low-priority ones held in deep work recorded.
func (s *Waits) fetchForWait(ctx context.Context, agentID, after int64, useAfter bool, limit int, via Via) (look, error) {
	var msgs []*Message
	var cursor int64
	var carry []*Message
	var held []int64
	var more bool
	err := view(ctx, s.store, func(tx waitsTx) error {
		// The agent's state is read with its messages, in one statement
		// when there are some, so that nothing is handed out once its
		// disabling has committed, though the commit's wake-up, which ends
		// its waits and streams, may not have come yet.
		in, err := tx.LookInbox(agentID, after, !useAfter, limit)
		if err != nil {
			return err
		}
		if in.Disabled {
			return errDisabledWhileWaiting()
		}
		msgs = in.Messages
		read := len(msgs)
		msgs = msgs[:fitPage(msgs)]
		more = read == limit || len(msgs) < read
		if len(msgs) > 0 {
			cursor = msgs[len(msgs)-1].ID
			carry = msgs
			if via.Confirmed() {
				now := s.clock.Now()
				carry, held = s.receipts.HandOut(agentID, via, msgs, func() bool { return inDeepWork(tx, agentID, now) }, now)
			}
			return nil
		}
		cursor = max(in.From, in.Latest)
		return nil
	})
	if err != nil {
		return look{}, err
	}
	if err := s.receipts.Hold(ctx, agentID, held); err != nil {
		return look{}, err
	}
	return look{msgs: carry, cursor: cursor, passed: len(msgs) > 0 && len(carry) == 0, more: more}, nil
}

// livenessStateTx reads an agent's liveness state.
type livenessStateTx interface {
	LivenessState(agentID int64) (*LivenessState, error)
}

// inDeepWork reports whether agentID's deep work is in force at now (a
// read that fails counts as none: nothing is held).
func inDeepWork(tx livenessStateTx, agentID int64, now time.Time) bool {
	st, err := tx.LivenessState(agentID)
	return err == nil && st.ActiveDeepWork.InForce(now)
}

// agentByIDTx reads one agent.
type agentByIDTx interface {
	AgentByID(id int64) (*Agent, error)
}

// enabledAgent reads the agent id inside tx, refusing a disabled one: what
// a stream's opening and a watch stream's look read first.
func enabledAgent(tx agentByIDTx, id int64) (*Agent, error) {
	a, err := tx.AgentByID(id)
	if err != nil {
		return nil, err
	}
	if a.Disabled() {
		return nil, Errorf(EPERMISSION, "agent %q was disabled", a.Name)
	}
	return a, nil
}
