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
	liveness *Liveness     // a wait's reply carries the caller's status
	receipts *Receipts     // and marks what it hands out delivered
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

// NewWaits returns the waits' service.
func NewWaits(c *Core, liveness *Liveness, receipts *Receipts) *Waits {
	return &Waits{core: c.core, liveness: liveness, receipts: receipts, poke: make(chan struct{}, 1)}
}

// Init reads the newest message ID, from which the fallback watcher starts.
func (s *Waits) Init(ctx context.Context) error {
	return s.store.View(ctx, func(tx Tx) (err error) {
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
	// those still pending when ctx ends are written before Run returns
	// (the store closes after).
	defer s.receipts.flushDeliveries(context.WithoutCancel(ctx))
	if s.cfg.PollOnly {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-s.receipts.deliveries.kick:
				s.receipts.flushDeliveries(ctx)
			}
		}
	}
	// Start from where Init looked, before any wait could park: reading the
	// high-water mark here instead would race with the first waits, and an
	// outside write landing in between would never wake them.
	last := s.watchFrom
	if !s.watchInited {
		if err := s.store.View(ctx, func(tx Tx) (err error) { last, err = tx.MaxMessageID(); return err }); err != nil && ctx.Err() == nil {
			return err
		}
	}
	s.watchMu.Lock()
	s.watched, s.watching = last, true
	s.watchMu.Unlock()
	var tick <-chan time.Time
	if s.cfg.PollInterval > 0 {
		t := time.NewTicker(s.cfg.PollInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		case <-s.poke:
		case <-s.receipts.deliveries.kick:
			s.receipts.flushDeliveries(ctx) // on failure the marks wait for the next kick
			continue
		}
		s.pollOnce(ctx)
		s.receipts.flushDeliveries(ctx) // marks left by a failed write (none: no store call)
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
	s.waiters.Notify(agentIDs...)
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
	s.waiters.Notify(ids...)
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
	err := s.store.View(ctx, func(tx Tx) error {
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
		s.waiters.Revoke(id, err)
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
	err := s.store.View(ctx, func(tx Tx) (err error) {
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
	s.waiters.Notify(ids...)
}

// Wait is the long-poll behind WaitForMessages (SPEC §5). It returns at once
// if the caller has unread messages (or, given AfterID, messages after it);
// otherwise it parks until a message arrives, the timeout ends or ctx ends.
// A timeout is a normal reply with TimedOut set, given a little before the
// caller's own deadline when ctx has one. Errors: EINVALID, EEXHAUSTED (too
// many parked waits), EPERMISSION (agent disabled meanwhile), ctx.Err().
// A wait that looked before the call's interceptors (ParkEarly, carried by
// ctx) answers with what that look found, or goes on from where it parked.
func (s *Waits) Wait(ctx context.Context, caller *Agent, req WaitRequest) (*WaitResult, error) {
	start := time.Now() // real time: the caller's deadline is real
	var res *WaitResult
	var wokenAt time.Time
	var err error
	switch early := earlyWaitOf(ctx, caller); {
	case early == nil:
		var plan waitPlan
		if plan, err = s.planWait(ctx, caller, req, start); err != nil {
			return nil, err
		}
		res, wokenAt, err = s.park(ctx, caller, plan.timeout, plan.fetch, nil)
	case early.found != nil:
		// The request was checked, its cursor looked up and its messages
		// read before the interceptors ran: they are the reply.
		start, res = early.start, early.found
	default:
		defer early.Close()
		if err := ctx.Err(); err != nil {
			return nil, err // the call ended while parked early
		}
		// The request was checked, and its cursor looked up, before it
		// parked: a woken wait only looks again.
		start = early.start
		res, wokenAt, err = s.park(ctx, caller, early.plan.timeout, early.plan.fetch, early.w)
		if wokenAt.IsZero() {
			wokenAt = early.woken
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.receipts.markDelivered(ctx, caller.ID, res.Messages); err != nil {
		return nil, err
	}
	SortByPriority(res.Messages)
	res.Waited = time.Since(start)
	var latency time.Duration
	if !wokenAt.IsZero() {
		latency = time.Since(wokenAt)
	}
	s.metrics.WaitEnded(res.Waited, res.TimedOut, latency)
	if res.Status, err = s.liveness.Status(ctx, caller); err != nil {
		return nil, err
	}
	return res, nil
}

// waitPlan is what a wait will do: park up to timeout (zero: only look),
// looking with fetch.
type waitPlan struct {
	timeout time.Duration
	fetch   func() ([]*Message, int64, error)
}

// planWait checks req and decides how long a wait that started at start
// may park. Errors: EINVALID, ENOTFOUND (an unknown after_id).
func (s *Waits) planWait(ctx context.Context, caller *Agent, req WaitRequest, start time.Time) (waitPlan, error) {
	after, err := ParseMessageID("after_id", req.AfterID)
	if err != nil {
		return waitPlan{}, err
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
		check := onOwnStack(func() ([]*Message, int64, error) {
			rctx, cancel := detachedRead(ctx)
			defer cancel()
			return nil, 0, s.store.View(rctx, func(tx Tx) error { return checkCursor(tx, "after_id", after) })
		})
		if _, _, err := check(); err != nil {
			return waitPlan{}, err
		}
	}
	deadline, _ := ctx.Deadline()
	budget := waitBudget{Default: s.cfg.WaitDefault, Max: s.cfg.WaitMax, Margin: s.cfg.DeadlineMargin}
	timeout, err := budget.park(req.TimeoutSeconds, start, deadline)
	if err != nil {
		return waitPlan{}, err
	}
	fetch := func() ([]*Message, int64, error) {
		rctx, cancel := detachedRead(ctx)
		defer cancel()
		return s.fetchForWait(rctx, caller.ID, after, req.AfterID != "", limit)
	}
	return waitPlan{timeout: timeout, fetch: onOwnStack(fetch)}, nil
}

// onOwnStack returns fetch run on a goroutine of its own. A parked wait
// keeps its goroutine's stack at whatever size the call grew it to, and a
// store read (database/sql and the SQLite driver) grows it past 8 KiB: run
// on the call's goroutine, it would leave every parked wait holding 16 KiB
// of stack instead of 8 (hubbench's memory scenario, 10,000 parked: 18.7
// against 10.7 KiB of stacks per waiter). The extra goroutine costs about a
// microsecond per look.
func onOwnStack(fetch func() ([]*Message, int64, error)) func() ([]*Message, int64, error) {
	return func() ([]*Message, int64, error) {
		var msgs []*Message
		var cursor int64
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			msgs, cursor, err = fetch()
		}()
		<-done
		return msgs, cursor, err
	}
}

// park returns what fetch finds, at once if it finds messages, else after
// waiting up to timeout (zero: not at all) for a wake-up of caller (or,
// with PollOnly, polling), and ends at once if caller's token is revoked.
// It returns when it was last woken, for the wake latency metric; the
// agent's wait is no longer counted when it returns. A wait that parked
// early passes its registered w, which keeps its own timeout.
func (s *Waits) park(ctx context.Context, caller *Agent, timeout time.Duration, fetch func() ([]*Message, int64, error), w *Waiter) (_ *WaitResult, wokenAt time.Time, _ error) {
	var poll <-chan time.Time
	if w == nil && timeout > 0 {
		// Register before the first check: a post that commits after the
		// check finds the wake-up slot and the loop checks again.
		var err error
		if w, err = s.waiters.Register(caller.ID, caller.authEpoch, caller.authHash); err != nil {
			return nil, wokenAt, err
		}
		defer w.Close()
		// The timeout, like a wake-up, a revocation and the hub's shutdown,
		// comes through the waiter's one channel: a parked wait blocks on
		// that and its context only. Close takes it off the timeouts.
		w.expireAfter(timeout)
		if s.cfg.PollOnly {
			t := time.NewTicker(s.cfg.PollInterval)
			defer t.Stop()
			poll = t.C
		}
	}
	for {
		msgs, cursor, err := fetch()
		if err != nil {
			return nil, wokenAt, err
		}
		// Checked after the read: a message posted after a revocation is
		// never handed to the revoked token.
		if err := revokedErr(w); err != nil {
			return nil, wokenAt, err
		}
		if len(msgs) > 0 {
			return &WaitResult{Messages: msgs, Cursor: cursor}, wokenAt, nil
		}
		if w == nil {
			// A peek (or no time left before the caller's deadline): nothing
			// arrived, which is a timeout like any other.
			return &WaitResult{Cursor: cursor, TimedOut: true}, wokenAt, nil
		}
		again, woken, err := s.parkUntil(ctx, w, poll)
		if err != nil {
			return nil, wokenAt, err
		}
		if !woken.IsZero() {
			wokenAt = woken
		}
		if !again {
			break
		}
	}
	// One last look: a message may have committed as the timeout passed.
	msgs, cursor, err := fetch()
	if err != nil {
		return nil, wokenAt, err
	}
	if err := revokedErr(w); err != nil {
		return nil, wokenAt, err
	}
	return &WaitResult{Messages: msgs, Cursor: cursor, TimedOut: len(msgs) == 0}, wokenAt, nil
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
			return true, time.Now(), nil
		case <-poll:
			return true, woken, nil
		case <-ctx.Done():
			return false, woken, ctx.Err()
		}
	}
}

// fetchForWait returns the caller's messages after its cursor (or its read
// cursor, when useAfter is false) and the cursor to hand back.
func (s *Waits) fetchForWait(ctx context.Context, agentID, after int64, useAfter bool, limit int) ([]*Message, int64, error) {
	var msgs []*Message
	var cursor int64
	err := s.store.View(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(agentID)
		if err != nil {
			return err
		}
		if a.Disabled() {
			return Errorf(EPERMISSION, "agent %q was disabled", a.Name)
		}
		from := after
		if !useAfter {
			from = a.ReadUpTo
		}
		msgs, err = tx.Inbox(agentID, InboxQuery{After: from, Limit: limit, ReadUpTo: a.ReadUpTo})
		if err != nil {
			return err
		}
		msgs = msgs[:fitPage(msgs)]
		if len(msgs) > 0 {
			cursor = msgs[len(msgs)-1].ID
			return nil
		}
		_, _, latest, err := tx.InboxCounts(agentID, from)
		cursor = max(from, latest)
		return err
	})
	return msgs, cursor, err
}
