package hub

import (
	"context"
	"time"
)

// EarlyWait is a wait registered and given its first look before the
// call's interceptors run (the gRPC server's WaitForMessages handler does
// this). A parked call keeps its goroutine's stack at the size it grew to,
// and the stack it parks on is gRPC's frames below the handler plus
// whatever runs above them: parked at the bottom of the handler, a wait
// keeps its goroutine within 4 KiB of stack, where parked under the
// interceptors, Wait and its loop it needs 8 KiB (hubbench's memory
// scenario, 10,000 parked). Once it is woken, times out, is revoked or its
// call ends, the call goes through the interceptors as any other, and Wait
// goes on with the same registration (WithEarlyWait): the wake-up it had is
// not lost, its timeout still counts from when it parked. A wait whose
// first look found messages does not park: Wait answers with what that
// look read, reading the store no more than a wait without an early look.
type EarlyWait struct {
	s      *Waits
	w      *Waiter
	caller int64
	start  time.Time
	plan   waitPlan    // what Wait goes on with
	woken  time.Time   // when Park was woken by a post (zero: it was not)
	found  *WaitResult // what the first look found, w then closed (nil: it found no message)
}

// ParkEarly registers a wait of caller for req and looks for messages once.
// When the look finds messages, it returns the wait unregistered, holding
// them: Park returns at once and Wait answers with them without reading
// the store again. It returns nil, registering nothing, when Wait would
// not park for another reason (a peek, a bad request, poll mode, a limit
// reached, a revoked token, a failed read): Wait then answers as it always
// does. Call it off the call's goroutine (its store reads grow a stack),
// then Park on it, and Close it when the call ends.
func (s *Waits) ParkEarly(ctx context.Context, caller *Agent, req WaitRequest) *EarlyWait {
	if s.cfg.PollOnly {
		return nil
	}
	start := time.Now()
	plan, err := s.planWait(ctx, caller, req, start)
	if err != nil || plan.timeout <= 0 {
		return nil
	}
	w, err := s.waiters.Register(caller.ID, caller.authEpoch, caller.authHash)
	if err != nil {
		return nil
	}
	w.expireAfter(plan.timeout)
	msgs, cursor, err := plan.fetch()
	if err != nil || revokedErr(w) != nil {
		w.Close()
		return nil
	}
	e := &EarlyWait{s: s, w: w, caller: caller.ID, start: start, plan: plan}
	if len(msgs) > 0 {
		w.Close()
		e.found = &WaitResult{Messages: msgs, Cursor: cursor}
	}
	return e
}

// Park blocks until the wait should look again (a wake-up, a revocation,
// its timeout, the hub stopping) or ctx ends; it returns at once if the
// first look found messages. It reads nothing.
func (e *EarlyWait) Park(ctx context.Context) {
	if e.found != nil || e.w.expired.Load() || e.s.stopping() {
		return
	}
	select {
	case <-e.w.c:
		if revokedErr(e.w) == nil && !e.w.expired.Load() && !e.s.stopping() {
			e.woken = time.Now()
		}
	case <-ctx.Done():
	}
}

// Close unregisters the wait; it is idempotent.
func (e *EarlyWait) Close() { e.w.Close() }

type earlyWaitKey struct{}

// WithEarlyWait returns ctx carrying e, for Wait to go on with.
func WithEarlyWait(ctx context.Context, e *EarlyWait) context.Context {
	return context.WithValue(ctx, earlyWaitKey{}, e)
}

// earlyWaitOf returns the early wait ctx carries for caller, nil if none.
func earlyWaitOf(ctx context.Context, caller *Agent) *EarlyWait {
	e, _ := ctx.Value(earlyWaitKey{}).(*EarlyWait)
	if e == nil || caller == nil || e.caller != caller.ID {
		return nil
	}
	return e
}
