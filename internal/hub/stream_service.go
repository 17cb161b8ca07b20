package hub

import (
	"context"
	"sync"
)

// A Stream is one Subscribe call (stream.go): Subscribe opens it, the
// caller's handler takes frames with Next, sends each and reports it with
// Sent, and closes the stream when the call ends. Next reads and parks on
// the handler's own goroutine, woken as the agent's waits are: the stream
// is one of the agent's parked waits (Waiters, bounded by
// --max-waiters-per-agent and --max-waiters), ended the same way by a
// revocation.
type Stream struct {
	s      *Waits
	caller *Agent
	via    Via // 0: a watch stream (SubscribeRequest.Watch)
	limit  int
	w      *Waiter
	ctx    context.Context // the call's: once it ended, the caller went away

	// Owned by Next's goroutine.
	cursor      int64        // after what the stream has handed out
	first       *StreamFrame // the first frame, until Next hands it out
	woken, more bool         // look at once: a wake-up came, or the last look read a full page
	idle        Timer        // StreamIdle since the last frame or look
	fetch       func() (look, error)

	once sync.Once
	mu   sync.Mutex
	sent map[int64]bool // messages of frames sent and not yet confirmed: at most streamSentMax
}

// streamSentMax bounds the messages a stream remembers having sent until
// they are confirmed: past it, it forgets them, and their confirmation
// reads the store as ConfirmDelivery does.
const streamSentMax = 1024

// Subscribe opens a stream of caller's wake-ups for the path req.Via,
// whose first frame (Next) holds its cursor and the caller's status; it
// reads until ctx ends or Close. Errors: EINVALID (no via, a path the
// stream cannot feed, a bad after_id or limit), EEXHAUSTED (too many
// parked waits), EUNAUTHORIZED (the token was revoked), EPERMISSION
// (agent disabled), the store's.
func (s *Waits) Subscribe(ctx context.Context, caller *Agent, req SubscribeRequest) (*Stream, error) {
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
	w, err := s.waiters.Register(caller.ID, caller.authEpoch, caller.authHash)
	if err != nil {
		return nil, err
	}
	st := &Stream{s: s, caller: caller, via: via, limit: limit, w: w, cursor: after, ctx: ctx, woken: true}
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
	// On its own stack, as a wait's reads are (onOwnStack): the stream
	// parks between looks with the stack its sends grew, no larger.
	st.fetch = onOwnStack(func() (look, error) {
		if st.via == 0 {
			return s.fetchLatest(ctx, st.caller.ID, st.cursor)
		}
		return s.fetchForWait(ctx, st.caller.ID, st.cursor, true, st.limit, st.via)
	})
	st.idle = s.clock.NewTimer(StreamIdle)
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

// Next returns the next frame to send: the first one, then, on the
// caller's goroutine, what a look finds after the cursor, parking until a
// wake-up when nothing is new (a frame with the cursor alone after
// StreamIdle of silence). It returns nil and why once the stream ends:
// EUNAUTHORIZED or EPERMISSION after a revocation, EUNAVAILABLE when the
// hub stops, ctx's error.
func (st *Stream) Next(ctx context.Context) (*StreamFrame, error) {
	if err := revokedErr(st.w); err != nil {
		return nil, err
	}
	if f := st.first; f != nil {
		st.first = nil
		return f, nil
	}
	s := st.s
	for {
		if st.woken || st.more {
			st.woken = false
			lk, err := st.fetch()
			if err == nil {
				err = revokedErr(st.w) // nothing read after a revocation is handed out
			}
			if err != nil {
				return nil, err
			}
			st.more = lk.more
			if lk.found() {
				st.cursor = lk.cursor
				if len(lk.msgs) > 0 || st.via == 0 {
					st.idle.Reset(StreamIdle)
					return &StreamFrame{Messages: lk.msgs, Cursor: lk.cursor}, nil
				}
			}
			continue
		}
		if s.stopping() {
			return nil, errStreamStopping()
		}
		select {
		case <-st.w.c:
			if err := revokedErr(st.w); err != nil {
				return nil, err
			}
			st.woken = true
		case <-st.idle.C():
			st.idle.Reset(StreamIdle)
			return &StreamFrame{Cursor: st.cursor}, nil // the stream is live, nothing new
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Sending records that f is about to be sent, so that its messages'
// confirmation (Confirm) needs no read of the store; Sent follows once it
// was.
func (st *Stream) Sending(f *StreamFrame) {
	if len(f.Messages) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sent == nil || len(st.sent)+len(f.Messages) > streamSentMax {
		st.sent = make(map[int64]bool, len(f.Messages))
	}
	for _, m := range f.Messages {
		st.sent[m.ID] = true
	}
}

// Sent records that f was sent: its messages are delivered (the path
// confirms what reaches the agent's context).
func (st *Stream) Sent(ctx context.Context, f *StreamFrame) error {
	return st.s.receipts.MarkReply(ctx, st.caller.ID, f.Messages, st.via)
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

// Close ends the stream: its wait is unregistered and its path closed.
// It is idempotent; Next is not called after it.
func (st *Stream) Close() {
	st.once.Do(func() {
		st.idle.Stop()
		st.w.Close()
		// A caller that went away leaves no live path behind; one that
		// ends for a resync or a restart comes back within its window.
		if st.via != 0 {
			st.s.paths.Close(st.caller.ID, st.via, st.s.clock.Now(), st.ctx.Err() != nil)
		}
	})
}
