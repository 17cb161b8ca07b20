package hub

import (
	"context"
	"sync"
)

// A Stream is one Subscribe call (stream.go): Subscribe opens it, the
// caller's handler starts it with Serve, which sends its frames, and
// closes it when the call ends. A stream is one of the agent's parked
// waits (Waiters, bounded by --max-waiters-per-agent and --max-waiters),
// woken and ended by a revocation as they are; between wake-ups it holds
// no goroutine.
type Stream struct {
	s      *Waits
	caller *Agent
	via    Via // 0: a watch stream (SubscribeRequest.Watch)
	limit  int
	w      *Waiter
	ctx    context.Context // the call's: once it ended, the caller went away
	send   func(*StreamFrame) error
	end    func(error)

	// Owned by the running pump.
	cursor int64        // after what the stream has handed out
	first  *StreamFrame // the first frame, until it is sent
	more   bool         // the last look read a full page: look again
	idle   Timer        // StreamIdle since the last frame sent

	pmu     sync.Mutex // guards the four below; a wake-up takes it with the registry's lock held
	woken   bool       // a wake-up came since the pump last looked
	idleDue bool       // StreamIdle passed since the last frame sent
	running bool       // a pump runs
	stopped bool       // the stream ended or was closed: no pump starts
	pumps   sync.WaitGroup
	once    sync.Once
	mu      sync.Mutex
	sent    map[int64]bool // messages of frames sent and not yet confirmed: at most streamSentMax
}

// streamSentMax bounds the messages a stream remembers having sent until
// they are confirmed: past it, it forgets them, and their confirmation
// reads the store as ConfirmDelivery does.
const streamSentMax = 1024

// Subscribe opens a stream of caller's wake-ups for the path req.Via,
// whose first frame (Serve) holds its cursor and the caller's status; it
// reads until ctx ends or Close. Errors: EINVALID (no via, a path the
// stream cannot feed, a bad after_id or limit), EEXHAUSTED (too many
// parked waits), EUNAUTHORIZED (the token was revoked), EPERMISSION
// (agent disabled), the store's.
func (s *Waits) Subscribe(ctx context.Context, caller *Agent, req SubscribeRequest) (*Stream, error) {
	// On a goroutine of its own (onOwnStack): the call's goroutine parks
	// reading the stream's requests for as long as it lasts.
	return onOwnStack(s.warm, func() (*Stream, error) { return s.subscribe(ctx, caller, req) })()
}

func (s *Waits) subscribe(ctx context.Context, caller *Agent, req SubscribeRequest) (*Stream, error) {
	after, err := ParseMessageID("after_id", req.AfterID)
	if err != nil {
		return nil, err
	}
	via, err := ParseVia("via", req.Via, ViaChannel, ViaTmux)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Watch && via != 0:
		return nil, Errorf(EINVALID, "via is set on a watch stream, which feeds no path: give one or the other")
	case !req.Watch && via == 0:
		return nil, Errorf(EINVALID, "via is empty: give the path this stream feeds, channel or tmux (or watch, for frames with the cursor alone)")
	}
	limit, err := s.limit(req.Limit, 20)
	if err != nil {
		return nil, err
	}
	// Registered before the cursor is placed: a message committed after
	// that wakes the stream.
	st := &Stream{s: s, caller: caller, via: via, limit: limit, cursor: after, ctx: ctx, woken: true}
	w, err := s.waiters.register(caller.ID, caller.authEpoch, caller.authHash, st.wake)
	if err != nil {
		return nil, err
	}
	st.w = w
	err = view(ctx, s.store, func(tx waitsTx) error {
		if after > 0 {
			return checkCursor(tx, "after_id", after)
		}
		a, err := enabledAgent(tx, caller.ID)
		if err != nil {
			return err
		}
		st.cursor = a.ReadUpTo
		return nil
	})
	if err == nil {
		err = revokedErr(w)
	}
	var status *Status
	if err == nil {
		status, err = s.liveness.Status(ctx, caller)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	if via != 0 {
		s.paths.Open(caller.ID, via, s.clock.Now())
	}
	st.first = &StreamFrame{Cursor: st.cursor, Status: status}
	return st, nil
}

// fetchLatest is a watch stream's look: the cursor past the newest
// message delivered to agentID, found when it is past after.
func (s *Waits) fetchLatest(ctx context.Context, agentID, after int64) (look, error) {
	var lk look
	err := view(ctx, s.store, func(tx waitsTx) error {
		if _, err := enabledAgent(tx, agentID); err != nil {
			return err
		}
		_, _, latest, err := tx.InboxCounts(agentID, after)
		lk.cursor = max(after, latest)
		lk.passed = latest > after
		return err
	})
	return lk, err
}

// errStreamStopping is the error a stream ends with when the hub stops.
func errStreamStopping() error {
	return Errorf(EUNAVAILABLE, "the hub is stopping: subscribe again with after_id set to the last frame's cursor")
}

// Serve starts the stream: it sends the first frame with send, then a
// frame with what a look after the cursor finds each time the agent's
// waits are woken (or the cursor alone after StreamIdle of silence), each
// message once and in order, and marks a frame's messages delivered once
// send returned. The looks and sends run on a goroutine a wake-up starts
// or wakes (pump, on a warm goroutine of the hub: warmSet), which it gives
// back when a look finds nothing new: a parked stream holds no goroutine.
// Sends are one at a time, so a reader that does not read holds up the
// next look, and the wake-ups meanwhile count as one. end is
// called once, on that goroutine, with why the stream ended: EUNAUTHORIZED
// or EPERMISSION after a revocation, EUNAVAILABLE when the hub stops,
// send's error or the store's; nothing is sent after it.
func (st *Stream) Serve(send func(*StreamFrame) error, end func(error)) {
	st.pmu.Lock()
	st.send, st.end = send, end
	st.idle = st.s.clock.AfterFunc(StreamIdle, st.idleFired)
	st.startLocked()
	st.pmu.Unlock()
}

// wake is the stream's wait's wake-up (Waiter.wake): look again.
func (st *Stream) wake() {
	st.pmu.Lock()
	st.woken = true
	st.startLocked()
	st.pmu.Unlock()
}

// idleFired is the idle timer's: send the cursor alone.
func (st *Stream) idleFired() {
	st.pmu.Lock()
	st.idleDue = true
	st.startLocked()
	st.pmu.Unlock()
}

// startLocked starts a pump unless one runs (it sees what was asked) or
// the stream ended; Serve must have been called.
func (st *Stream) startLocked() {
	if st.running || st.stopped || st.send == nil {
		return
	}
	st.running = true
	st.pumps.Add(1)
	st.s.warm.Go(st.pump)
}

// Carry runs f, a call the stream carries, on a warm goroutine of the
// hub (warmSet), as its pump runs: it may be one that just ran a pump.
func (st *Stream) Carry(f func()) {
	st.s.warm.Go(f)
}

// pump looks and sends until nothing was asked since its last look.
func (st *Stream) pump() {
	defer st.pumps.Done()
	for {
		st.pmu.Lock()
		woken, idle := st.woken, st.idleDue
		st.woken, st.idleDue = false, false
		if !woken && !idle && st.first == nil {
			st.running = false
			st.pmu.Unlock()
			return
		}
		st.pmu.Unlock()
		if err := st.step(woken, idle); err != nil {
			st.pmu.Lock()
			st.running, st.stopped = false, true
			st.pmu.Unlock()
			st.end(err)
			return
		}
	}
}

// step sends the first frame if it was not, then what looks after the
// cursor find (woken: something may have arrived), then, idle and nothing
// sent, the cursor alone.
func (st *Stream) step(woken, idle bool) error {
	if err := revokedErr(st.w); err != nil {
		return err
	}
	if f := st.first; f != nil {
		st.first = nil
		if err := st.deliver(f); err != nil {
			return err
		}
	}
	for woken || st.more {
		woken = false
		lk, err := st.look()
		if err == nil {
			err = revokedErr(st.w) // nothing read after a revocation is handed out
		}
		if err != nil {
			return err
		}
		st.more = lk.more
		if lk.found() {
			st.cursor = lk.cursor
			if len(lk.msgs) > 0 || st.via == 0 {
				idle = false
				if err := st.deliver(&StreamFrame{Messages: lk.msgs, Cursor: lk.cursor}); err != nil {
					return err
				}
			}
		}
	}
	if st.s.stopping() {
		return errStreamStopping()
	}
	if idle {
		return st.deliver(&StreamFrame{Cursor: st.cursor}) // the stream is live, nothing new
	}
	return nil
}

// look reads what is new after the cursor.
func (st *Stream) look() (look, error) {
	if st.via == 0 {
		return st.s.fetchLatest(st.ctx, st.caller.ID, st.cursor)
	}
	return st.s.fetchForWait(st.ctx, st.caller.ID, st.cursor, true, st.limit, st.via)
}

// deliver sends f and marks its messages delivered (the path confirms
// what reaches the agent's context); it records them first, so that their
// confirmation (Confirm) needs no read of the store.
func (st *Stream) deliver(f *StreamFrame) error {
	if len(f.Messages) > 0 {
		st.mu.Lock()
		if st.sent == nil || len(st.sent)+len(f.Messages) > streamSentMax {
			st.sent = make(map[int64]bool, len(f.Messages))
		}
		for _, m := range f.Messages {
			st.sent[m.ID] = true
		}
		st.mu.Unlock()
	}
	if err := st.send(f); err != nil {
		return err
	}
	st.idle.Reset(StreamIdle)
	return st.s.receipts.MarkReply(st.ctx, st.caller.ID, f.Messages, st.via)
}

// Confirm records that the messages named by ids reached the agent's
// context through the stream's path, as Receipts.Confirm does: those the
// stream sent at no cost (a pending mark), others after the store says
// they were delivered to the caller. Errors: EINVALID (no ID, too many,
// malformed), ENOTFOUND (an ID not delivered to the caller: nothing is
// recorded).
func (st *Stream) Confirm(ctx context.Context, ids []string) error {
	if st.via == 0 {
		return Errorf(EINVALID, "confirm_ids on a watch stream, which carries no message: confirm on the stream that carried them")
	}
	nums, err := parseIDList(ids, MaxConfirmIDs, "confirm")
	if err != nil {
		return err
	}
	st.mu.Lock()
	mine := true
	for _, id := range nums {
		mine = mine && st.sent[id]
	}
	if mine {
		for _, id := range nums {
			delete(st.sent, id)
		}
	}
	st.mu.Unlock()
	if !mine {
		return st.s.receipts.Confirm(ctx, st.caller, ids, st.via.String())
	}
	now := st.s.clock.Now()
	st.s.paths.Seen(st.caller.ID, st.via, now)
	return st.s.receipts.Settle(ctx, st.caller.ID, nums, st.via, now)
}

// Close ends the stream: it waits for a look or send under way (the
// caller unblocks send first: its stream's context ended), then its wait
// is unregistered and its path closed. It is idempotent.
func (st *Stream) Close() {
	st.once.Do(func() {
		st.pmu.Lock()
		st.stopped = true
		st.pmu.Unlock()
		st.pumps.Wait()
		if st.idle != nil {
			st.idle.Stop()
		}
		st.w.Close()
		// A caller that went away leaves no live path behind; one that
		// ends for a resync or a restart comes back within its window.
		if st.via != 0 {
			st.s.paths.Close(st.caller.ID, st.via, st.s.clock.Now(), st.ctx.Err() != nil)
		}
	})
}
