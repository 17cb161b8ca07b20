package hub

import (
	"context"
	"time"
)

// Injections is the service of host hooks: what a hook injects into an
// agent's context, and whether it holds a stop.
type Injections struct {
	*core
	store    txs[injectionsTx] // the store methods it uses
	receipts pathCarrier       // what the hook path may carry
}

// injectionsTx is what the injections service reads and writes in one transaction:
// the store methods it uses, by their group.
type injectionsTx interface {
	// HealthTx
	LivenessState(agentID int64) (*LivenessState, error)
	// InjectionTx
	InjectionState(agentID int64) (*InjectionState, int64, int64, error)
	PutInjectionState(st InjectionState) error
	// MessageTx
	Inbox(agentID int64, q InboxQuery) ([]*Message, error)
	InboxCounts(agentID, after int64) (unread, mentions, latest int64, err error)
	// ReceiptTx
	HoldDeliveries(agentID int64, ids []int64) error
	MarkDelivered(agentID int64, ids []int64, at time.Time) error
}

// NewInjections returns the hooks' service.
func NewInjections(c *Core, receipts pathCarrier) *Injections {
	return &Injections{core: c.core, store: txsOf[injectionsTx](c.store), receipts: receipts}
}

// Injection is what a host hook injects into an agent's session: the
// messages delivered since the last injection, oldest first, and how many
// more were passed over past the limit (they stay unread; the agent reads
// them itself).
type Injection struct {
	Messages []*Message
	More     int64
	// Cursor is the injection cursor after this call.
	Cursor int64
}

// TakeInjection returns the caller's messages, nudges and pulses delivered
// since its injection cursor (or its read cursor, if that is further) and
// moves the cursor past every one of them, the ones past limit included,
// in one transaction: two hooks racing never inject the same message.
// Those already in the caller's context, or on their way through another
// of its paths, are passed over (pages of nothing but messages in its
// context are read past, injectionPages at most), and so are low-priority ones while it is
// in deep work (held for its digest: Receipts.HandOut). It marks nothing
// read, and nothing in context: the hook confirms what it printed
// (Receipts.Confirm). limit 0 means DefaultInjection. Errors: EINVALID.
func (s *Injections) TakeInjection(ctx context.Context, caller *Agent, limit int) (*Injection, error) {
	switch {
	case limit < 0:
		return nil, Errorf(EINVALID, "limit %d is negative: give 1-%d, or 0 for the default (%d)", limit, MaxInjection, DefaultInjection)
	case limit == 0:
		limit = DefaultInjection
	case limit > MaxInjection:
		limit = MaxInjection
	}
	s.paths.Seen(caller.ID, ViaHook, s.clock.Now())
	// Most calls find nothing new: answer those from one read, without a
	// write. The newest delivery is exact (the counters follow deletions
	// too), so one past the cursor means there are messages to take.
	var out *Injection
	err := view(ctx, s.store, func(tx injectionsTx) error {
		st, readUpTo, latest, err := tx.InjectionState(caller.ID)
		if err != nil {
			return err
		}
		if from := InjectionStart(*st, readUpTo); latest <= from {
			out = &Injection{Cursor: from}
		}
		return nil
	})
	if err != nil || out != nil {
		return out, err
	}
	err = update(ctx, s.store, func(tx injectionsTx) error {
		var err error
		out, err = s.takeInjection(ctx, tx, caller.ID, limit)
		return err
	})
	return out, err
}

// takeInjection reads what is new since the injection cursor and moves
// the cursor past it — unless the caller has given up meanwhile (a hook
// past its time-out): then nothing moves, and the next injection shows
// these messages instead of none.
func (s *Injections) takeInjection(ctx context.Context, tx injectionsTx, agentID int64, limit int) (*Injection, error) {
	st, readUpTo, latest, err := tx.InjectionState(agentID)
	if err != nil {
		return nil, err
	}
	from := InjectionStart(*st, readUpTo)
	out := &Injection{Cursor: from}
	if latest <= from {
		return out, nil // taken meanwhile by another hook
	}
	// What a channel showed the agent since its last injection comes
	// first past the cursor, already in its context: a page of nothing
	// else is read past (a few at most), so that what follows it is
	// injected rather than passed over with it.
	var msgs []*Message
	start := from
	for page := 1; ; page++ {
		var err error
		if msgs, err = tx.Inbox(agentID, InboxQuery{After: start, Limit: limit, ReadUpTo: readUpTo}); err != nil {
			return nil, err
		}
		if len(msgs) < limit || page == injectionPages || !s.receipts.AllInContext(agentID, msgs) {
			break
		}
		start = msgs[len(msgs)-1].ID
	}
	if len(msgs) == 0 {
		return out, nil
	}
	out.Messages = msgs
	out.Cursor = max(latest, msgs[len(msgs)-1].ID)
	if len(msgs) == limit {
		// The limit may have cut the inbox short: count what it passed
		// over. Below it, the inbox read every delivery past the cursor.
		n, _, latest, err := tx.InboxCounts(agentID, start)
		if err != nil {
			return nil, err
		}
		out.More = max(n-int64(len(msgs)), 0)
		out.Cursor = max(latest, out.Cursor)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st.UpTo, st.UpdatedAt = out.Cursor, s.clock.Now()
	var held []int64
	out.Messages, held = s.receipts.HandOut(agentID, ViaHook, msgs, func() bool { return inDeepWork(tx, agentID, st.UpdatedAt) }, st.UpdatedAt)
	if len(held) > 0 {
		if err := tx.HoldDeliveries(agentID, held); err != nil {
			return nil, err
		}
	}
	// An injection hands the messages to the agent's host: their first
	// delivery, if no read or wait came before.
	var first []int64
	for _, m := range out.Messages {
		if !m.Delivered {
			first = append(first, m.ID)
		}
	}
	if len(first) > 0 {
		if err := tx.MarkDelivered(agentID, first, st.UpdatedAt); err != nil {
			return nil, err
		}
	}
	return out, tx.PutInjectionState(*st)
}

// injectionPages bounds the pages an injection reads past messages all
// already in the agent's context.
const injectionPages = 5

// StopCheck is the answer to a host that wants to end the agent's turn.
type StopCheck struct {
	Hold bool
	// Messages are the unread messages that hold the stop (HoldsStop),
	// oldest first, at most a few; Count is how many there are.
	Messages []*Message
	Count    int
	// HeldInARow counts the stops held in a row, this one included.
	HeldInARow int
}

// CheckStop decides whether the caller's host may end its turn: it holds
// the stop while unread direct messages or mentions wait, at most
// MaxStopHolds times in a row (DecideStop); continuing says the host is
// already going on because of a held stop. Errors: none of its own.
func (s *Injections) CheckStop(ctx context.Context, caller *Agent, continuing bool) (*StopCheck, error) {
	s.paths.Seen(caller.ID, ViaHook, s.clock.Now())
	out := &StopCheck{}
	err := update(ctx, s.store, func(tx injectionsTx) error {
		st, readUpTo, latest, err := tx.InjectionState(caller.ID)
		if err != nil {
			return err
		}
		var unread []*Message
		if latest > readUpTo { // else nothing is unread
			if unread, err = tx.Inbox(caller.ID, InboxQuery{After: readUpTo, Limit: stopScan, ReadUpTo: readUpTo}); err != nil {
				return err
			}
		}
		for _, m := range unread {
			if HoldsStop(m) {
				out.Count++
				if len(out.Messages) < stopListed {
					out.Messages = append(out.Messages, m)
				}
			}
		}
		held := st.StopHolds
		out.Hold, out.HeldInARow = DecideStop(out.Count, held, continuing)
		if out.HeldInARow == held {
			return nil
		}
		st.StopHolds, st.UpdatedAt = out.HeldInARow, s.clock.Now()
		return tx.PutInjectionState(*st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Hold {
		out.Messages = nil
	}
	return out, nil
}

// InjectionTx stores where each agent's host hooks stand.
type InjectionTx interface {
	// InjectionState returns agentID's state, the zero state (with AgentID
	// set) when none was stored, the agent's read cursor (where an
	// injection starts: InjectionStart) and the ID of its newest delivery
	// (0 if none; MessageTx.InboxCounts' latest): when that is not past
	// where a read starts, there is nothing to read. ENOTFOUND (no such
	// agent).
	InjectionState(agentID int64) (st *InjectionState, readUpTo, latest int64, err error)
	// PutInjectionState stores st, replacing the agent's earlier state.
	PutInjectionState(st InjectionState) error
}
