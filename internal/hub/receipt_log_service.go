package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The delivery log: the marks of what replies handed out (delivered, in
// context, held for a digest), buffered in memory and written by the
// fallback watcher's loop (Waits.Run) in one transaction per batch, so that
// a reply is never delayed by a write and a burst of replies costs one
// write; and the messages on their way through a path (claims), so that a
// message reaches an agent once whichever of its paths carries it.

// deliveryMark is one batch of marks of one agent's deliveries, not yet
// written.
type deliveryMark struct {
	agentID int64
	ids     []int64
	at      time.Time
	via     Via  // in context through via; 0: delivered only
	hold    bool // held for the digest of the agent's deep work (digest.go)
}

// deliveryLog holds the delivery marks of replies already sent, and the
// claims of the paths.
type deliveryLog struct {
	mu      sync.Mutex
	pending []deliveryMark
	writing []deliveryMark // taken by the flush that is writing them
	claims  map[int64]map[int64]claim
	nclaims int
	kick    chan struct{} // Run writes the pending marks
	// unattended is set once Run has ended (the hub is stopping): a mark
	// recorded after it, by a call the servers still finish, is written
	// by the call that records it.
	unattended bool
	// flushing is held by a flush from taking the marks until they are
	// written: a read that flushes first (receipts, acknowledgements) then
	// waits for marks another flush took and is still writing.
	flushing sync.Mutex
}

// claim is a message handed to one of an agent's paths and not yet
// confirmed: the other paths pass it over until its lease runs out.
type claim struct {
	via   Via
	until time.Time
}

// claimLease is how long a path has to confirm what it was handed (a
// channel notification is written at once; a hook prints within its
// time-out; the sidecar looks again before it pastes).
const claimLease = 30 * time.Second

// maxClaims bounds the claims held: past it the expired ones are dropped.
const maxClaims = 1 << 16

// maxPendingMarks bounds the marks held in memory: past it the read that
// adds one writes them all itself (Run is not keeping up, or not running).
const maxPendingMarks = 4096

// MarksPending is ready when marks wait to be written (FlushDeliveries).
func (s *Receipts) MarksPending() <-chan struct{} { return s.deliveries.kick }

// replyMarker marks what a reply handed out (satisfied by *Receipts).
type replyMarker interface {
	MarkReply(ctx context.Context, agentID int64, msgs []*Message, via Via) error
}

// pathCarrier decides what a path may carry (satisfied by *Receipts).
type pathCarrier interface {
	HandOut(agentID int64, via Via, msgs []*Message, inDeepWork func() bool, now time.Time) (carry []*Message, held []int64)
	AllInContext(agentID int64, msgs []*Message) bool
}

// MarkReply records what a reply just handed to agentID carried: for the
// agent's own wait or read (via), the messages not yet in its context are
// now; for a path's wait (a via that confirms), the messages not yet
// delivered are delivered (the path confirms what the host took).
func (s *Receipts) MarkReply(ctx context.Context, agentID int64, msgs []*Message, via Via) error {
	var ids []int64
	for _, m := range msgs {
		if via.Confirmed() && !m.Delivered || !via.Confirmed() && !m.InContext {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	mark := deliveryMark{agentID: agentID, ids: ids, at: s.clock.Now(), via: via}
	if via.Confirmed() {
		mark.via = 0
	}
	return s.record(ctx, mark)
}

// record adds mark to the pending marks and has them written soon.
func (s *Receipts) record(ctx context.Context, mark deliveryMark) error {
	l := &s.deliveries
	l.mu.Lock()
	l.pending = append(l.pending, mark)
	full := len(l.pending) >= maxPendingMarks || l.unattended
	l.mu.Unlock()
	if full {
		return s.FlushDeliveries(ctx)
	}
	select {
	case l.kick <- struct{}{}:
	default: // a write is already due
	}
	return nil
}

// FlushLast writes the pending delivery marks for the last time from
// Run, which is ending: the marks recorded after it are written by the
// call that records them, so no confirmation a call acknowledges while the
// hub stops is lost.
func (s *Receipts) FlushLast(ctx context.Context) error {
	l := &s.deliveries
	l.mu.Lock()
	l.unattended = true
	l.mu.Unlock()
	return s.FlushDeliveries(ctx)
}

// FlushDeliveries writes the pending delivery marks in one transaction,
// and returns once every mark recorded before it was called is written.
// On failure they stay pending for the next attempt.
func (s *Receipts) FlushDeliveries(ctx context.Context) error {
	l := &s.deliveries
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.mu.Lock()
	marks := l.pending
	l.pending, l.writing = nil, marks
	l.mu.Unlock()
	if len(marks) == 0 {
		return nil
	}
	err := update(ctx, s.store, func(tx receiptsTx) error {
		for _, m := range marks {
			var err error
			switch {
			case m.hold:
				err = tx.HoldDeliveries(m.agentID, m.ids)
			case m.via != 0:
				err = tx.MarkInContext(m.agentID, m.ids, m.at, m.via)
			default:
				err = tx.MarkDelivered(m.agentID, m.ids, m.at)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	l.mu.Lock()
	l.writing = nil
	if err != nil {
		l.pending = append(marks, l.pending...)
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}

// inContextLocked returns the IDs of agentID's messages that marks not yet
// written put in its context; l.mu is held.
func (l *deliveryLog) inContextLocked(agentID int64) map[int64]bool {
	var in map[int64]bool
	for _, marks := range [2][]deliveryMark{l.writing, l.pending} {
		for _, m := range marks {
			if m.agentID != agentID || m.via == 0 {
				continue
			}
			if in == nil {
				in = make(map[int64]bool)
			}
			for _, id := range m.ids {
				in[id] = true
			}
		}
	}
	return in
}

// AllInContext reports whether every one of msgs, just read for agentID,
// is in the agent's context: written, or marked and not yet written.
func (s *Receipts) AllInContext(agentID int64, msgs []*Message) bool {
	l := &s.deliveries
	l.mu.Lock()
	defer l.mu.Unlock()
	var marked map[int64]bool
	for _, m := range msgs {
		if m.InContext {
			continue
		}
		if marked == nil {
			if marked = l.inContextLocked(agentID); marked == nil {
				return false
			}
		}
		if !marked[m.ID] {
			return false
		}
	}
	return true
}

// HandOut decides which of msgs, just read for agentID's path via (a path
// that confirms: hook, channel, tmux), the path carries: not those already
// in the agent's context (written, or marked and not yet written), nor
// those another path was handed and has not confirmed or let lapse
// (claims), nor, while the agent is in deep work (inDeepWork, asked only
// when a message is of low priority), those of low priority: held for the
// digest when it ends. The path claims the ones it carries until it
// confirms them (Confirm) or claimLease passes; but for the tmux sidecar,
// which waits for its pane to go idle before it pastes: a channel push or
// a hook that comes first carries the message, and the sidecar, looking
// again just before it pastes, passes over what they took. It returns the
// messages carried, in order, and the held ones' IDs.
func (s *Receipts) HandOut(agentID int64, via Via, msgs []*Message, inDeepWork func() bool, now time.Time) (carry []*Message, held []int64) {
	deep, asked := false, false
	l := &s.deliveries
	l.mu.Lock()
	defer l.mu.Unlock()
	inContext := l.inContextLocked(agentID)
	claims := l.claims[agentID]
	for _, m := range msgs {
		if m.InContext || inContext[m.ID] {
			continue
		}
		if c, ok := claims[m.ID]; ok && c.via != via && now.Before(c.until) {
			continue
		}
		if m.Priority == PriorityLow {
			if !asked {
				l.mu.Unlock() // a store read: not under the lock
				deep, asked = inDeepWork(), true
				l.mu.Lock()
				claims = l.claims[agentID]
			}
			if deep {
				held = append(held, m.ID)
				continue
			}
		}
		carry = append(carry, m)
	}
	if len(carry) == 0 || via == ViaTmux {
		return carry, held
	}
	if l.claims == nil {
		l.claims = make(map[int64]map[int64]claim)
	}
	if l.nclaims >= maxClaims {
		l.dropExpiredLocked(now)
	}
	if claims == nil {
		claims = make(map[int64]claim)
		l.claims[agentID] = claims
	}
	for id, c := range claims {
		if !now.Before(c.until) {
			delete(claims, id)
			l.nclaims--
		}
	}
	for _, m := range carry {
		if _, ok := claims[m.ID]; !ok {
			l.nclaims++
		}
		claims[m.ID] = claim{via: via, until: now.Add(claimLease)}
	}
	return carry, held
}

// dropExpiredLocked drops every claim whose lease ran out; l.mu is held.
func (l *deliveryLog) dropExpiredLocked(now time.Time) {
	for agent, claims := range l.claims {
		for id, c := range claims {
			if !now.Before(c.until) {
				delete(claims, id)
				l.nclaims--
			}
		}
		if len(claims) == 0 {
			delete(l.claims, agent)
		}
	}
}

// Settle records that agentID's messages ids reached its context through
// via at now: their claims end and an in-context mark is pending.
func (s *Receipts) Settle(ctx context.Context, agentID int64, ids []int64, via Via, now time.Time) error {
	l := &s.deliveries
	l.mu.Lock()
	if claims := l.claims[agentID]; claims != nil {
		for _, id := range ids {
			if _, ok := claims[id]; ok {
				delete(claims, id)
				l.nclaims--
			}
		}
		if len(claims) == 0 {
			delete(l.claims, agentID)
		}
	}
	l.mu.Unlock()
	return s.record(ctx, deliveryMark{agentID: agentID, ids: ids, at: now, via: via})
}

// Hold records that agentID's messages ids were held for the digest of its
// deep work.
func (s *Receipts) Hold(ctx context.Context, agentID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.record(ctx, deliveryMark{agentID: agentID, ids: ids, at: s.clock.Now(), hold: true})
}
