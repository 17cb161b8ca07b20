package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Receipts is the service of delivery receipts: delivered, read and
// acknowledged per recipient, and the overdue acknowledgements.
type Receipts struct {
	*core
	deliveries deliveryLog // delivery marks of replies sent, written by Waits.Run
}

// receiptsTx is what the receipts service reads and writes in one transaction:
// the store groups of its nouns.
type receiptsTx interface {
	EventTx
	MessageTx
	ReceiptTx
}

// NewReceipts returns the receipts' service.
func NewReceipts(c *Core) *Receipts {
	r := &Receipts{core: c.core}
	r.deliveries.kick = make(chan struct{}, 1)
	return r
}

// ReceiptTx stores the receipts of deliveries: when each left the hub, the
// read cursor's moves and the acknowledgements.
type ReceiptTx interface {
	// MarkDelivered sets the delivery time of agentID's deliveries of ids
	// that have none yet to at.
	MarkDelivered(agentID int64, ids []int64, at time.Time) error
	// Acknowledge sets the acknowledgement time of agentID's delivery of
	// messageID to at unless it has one, and returns the stored time and
	// whether this call set it. An acknowledged delivery counts as
	// delivered. ENOTFOUND when agentID did not receive messageID.
	Acknowledge(agentID, messageID int64, at time.Time) (time.Time, bool, error)
	// RecordRead records that agentID's read cursor moved up to upTo at at.
	RecordRead(agentID, upTo int64, at time.Time) error
	// Receipts returns one receipt per recipient of messageID, by agent
	// name (none for a message without recipients or an unknown one).
	Receipts(messageID int64) ([]Receipt, error)
	// OverdueAcks returns up to limit deliveries of messages created at or
	// before cutoff that asked for an acknowledgement, got none and were
	// not nudged about yet, to enabled agents not in strict deep work at
	// now, by agent then message ID. It reads only such deliveries (a
	// partial index).
	OverdueAcks(cutoff, now time.Time, limit int) ([]PendingAck, error)
	// RecordAckNudges marks agentID's deliveries of ids as nudged about at
	// at, so OverdueAcks no longer returns them.
	RecordAckNudges(agentID int64, ids []int64, at time.Time) error
}

// deliveryMark is one reply's first deliveries, not yet written.
type deliveryMark struct {
	agentID int64
	ids     []int64
	at      time.Time
}

// deliveryLog holds the delivery marks of replies already sent: a read
// records them here and answers at once, and the fallback watcher's loop
// (Run) writes everything pending in one transaction. A wake-up is thus
// never delayed by a write, and a burst of replies costs one write.
type deliveryLog struct {
	mu      sync.Mutex
	pending []deliveryMark
	kick    chan struct{} // Run writes the pending marks
	// flushing is held by a flush from taking the marks until they are
	// written: a read that flushes first (receipts, acknowledgements) then
	// waits for marks another flush took and is still writing.
	flushing sync.Mutex
}

// maxPendingMarks bounds the marks held in memory: past it the read that
// adds one writes them all itself (Run is not keeping up, or not running).
const maxPendingMarks = 4096

// markDelivered records that msgs, just handed to agentID, left the hub.
// Only those handed out for the first time are recorded.
func (s *Receipts) markDelivered(ctx context.Context, agentID int64, msgs []*Message) error {
	var ids []int64
	for _, m := range msgs {
		if !m.Delivered {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	l := &s.deliveries
	l.mu.Lock()
	l.pending = append(l.pending, deliveryMark{agentID, ids, s.clock.Now()})
	full := len(l.pending) >= maxPendingMarks
	l.mu.Unlock()
	if full {
		return s.flushDeliveries(ctx)
	}
	select {
	case l.kick <- struct{}{}:
	default: // a write is already due
	}
	return nil
}

// flushDeliveries writes the pending delivery marks in one transaction,
// and returns once every mark recorded before it was called is written.
// On failure they stay pending for the next attempt.
func (s *Receipts) flushDeliveries(ctx context.Context) error {
	l := &s.deliveries
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.mu.Lock()
	marks := l.pending
	l.pending = nil
	l.mu.Unlock()
	if len(marks) == 0 {
		return nil
	}
	err := update(ctx, s.store, func(tx receiptsTx) error {
		for _, m := range marks {
			if err := tx.MarkDelivered(m.agentID, m.ids, m.at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		l.mu.Lock()
		l.pending = append(marks, l.pending...)
		l.mu.Unlock()
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}

// Acknowledge acknowledges the messages named by ids for the caller, all or
// none. Acknowledging again keeps the first time (First is then false); a
// message that did not ask for an acknowledgement may be acknowledged too.
// Errors: EINVALID (no ID, too many, malformed), ENOTFOUND (an ID the
// caller did not receive: whether it exists is not told).
func (s *Receipts) Acknowledge(ctx context.Context, caller *Agent, ids []string) ([]Ack, error) {
	if len(ids) == 0 {
		return nil, Errorf(EINVALID, "ids is empty: give the IDs of the messages to acknowledge")
	}
	if len(ids) > MaxAckIDs {
		return nil, Errorf(EINVALID, "ids names %d messages; the limit is %d per call", len(ids), MaxAckIDs)
	}
	var nums []int64
	seen := map[int64]bool{}
	for _, v := range ids {
		id, err := ParseMessageID("ids", v)
		if err != nil {
			return nil, err
		}
		if id == 0 {
			return nil, Errorf(EINVALID, "ids holds an empty ID: give message IDs such as \"42\"")
		}
		if !seen[id] {
			seen[id] = true
			nums = append(nums, id)
		}
	}
	if err := s.flushDeliveries(ctx); err != nil { // an earlier delivery keeps its time
		return nil, err
	}
	now := s.clock.Now()
	var acks []Ack
	err := update(ctx, s.store, func(tx receiptsTx) error {
		acks = acks[:0]
		for _, id := range nums {
			at, first, err := tx.Acknowledge(caller.ID, id, now)
			if ErrorCode(err) == ENOTFOUND {
				return Errorf(ENOTFOUND, "message %d is not among the messages delivered to you: nothing was acknowledged", id)
			} else if err != nil {
				return err
			}
			acks = append(acks, Ack{MessageID: id, AckedAt: at, First: first})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return acks, nil
}

// Get returns a message and, per recipient, its delivery, read and
// acknowledgement receipts. With a caller, only its sender may see them:
// ENOTFOUND for a message the caller neither sent nor received (whether it
// exists is not told), EPERMISSION for one it only received. Without a
// caller (the admin) any message. Errors: EINVALID, ENOTFOUND, EPERMISSION.
func (s *Receipts) Get(ctx context.Context, caller *Agent, id string) (*Message, []Receipt, error) {
	n, err := ParseMessageID("id", id)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, Errorf(EINVALID, "id is empty: give the ID of a message")
	}
	if err := s.flushDeliveries(ctx); err != nil { // the replies this process already sent
		return nil, nil, err
	}
	var m *Message
	var rs []Receipt
	err = view(ctx, s.store, func(tx receiptsTx) error {
		notFound := Errorf(ENOTFOUND, "no message %d", n)
		if caller != nil {
			notFound = Errorf(ENOTFOUND, "no message %d among the messages you sent or received", n)
		}
		m, err = tx.MessageByID(n)
		if ErrorCode(err) == ENOTFOUND {
			return notFound
		} else if err != nil {
			return err
		}
		if rs, err = tx.Receipts(n); err != nil {
			return err
		}
		if caller == nil || m.From == caller.Name {
			return nil
		}
		for _, r := range rs {
			if r.AgentID == caller.ID {
				return Errorf(EPERMISSION, "message %d was sent by %s: only its sender (or the admin) sees its receipts", n, m.From)
			}
		}
		return notFound
	})
	if err != nil {
		return nil, nil, err
	}
	return m, rs, nil
}

// CheckAckOverdue nudges, once per message, each agent that was asked to
// acknowledge a message created at least set.AckOverdue before now and has
// not (never while its strict deep work is in force: then the nudge comes
// when it ends): one nudge per agent per tick, naming all its newly overdue messages,
// at high priority. One query finds them, whatever the number of agents.
// It returns how many agents it nudged; more is true when the batch was full.
func (s *Receipts) CheckAckOverdue(ctx context.Context, now time.Time, set ScheduleSettings) (nudged int, more bool, _ error) {
	cutoff := now.Add(-set.AckOverdue)
	// Most ticks find nothing: look in a read first, so that they cost no write.
	var due []PendingAck
	if err := view(ctx, s.store, func(tx receiptsTx) (err error) { due, err = tx.OverdueAcks(cutoff, now, 1); return err }); len(due) == 0 || err != nil {
		return 0, false, err
	}
	var wake []int64
	err := update(ctx, s.store, func(tx receiptsTx) error {
		wake = wake[:0]
		ps, err := tx.OverdueAcks(cutoff, now, set.BatchLimit)
		if err != nil {
			return err
		}
		more = len(ps) == set.BatchLimit
		var ms []*Message
		var ds [][]Delivery
		var evs []Event
		for _, g := range groupPendingAcks(ps) {
			a := &Agent{ID: g[0].AgentID, Name: g[0].Agent, Locale: g[0].Locale}
			text := ackOverdueText(g, s.locale(a), now)
			m, d, err := s.nudgeMessage(a, text, now)
			if err != nil {
				return fmt.Errorf("acknowledgement nudge %s: %w", a.Name, err)
			}
			m.Priority = PriorityHigh
			ids := make([]int64, len(g))
			for i, p := range g {
				ids[i] = p.MessageID
			}
			if err := tx.RecordAckNudges(a.ID, ids, now); err != nil {
				return err
			}
			ms, ds, wake = append(ms, m), append(ds, d), append(wake, a.ID)
			evs = append(evs, Event{AgentID: a.ID, Kind: EventNudge, Detail: "acknowledgement overdue: " + text, CreatedAt: now})
		}
		if err := tx.InsertMessages(ms, ds); err != nil {
			return err
		}
		return tx.InsertEvents(evs)
	})
	if err != nil {
		return 0, false, err
	}
	s.waiters.Notify(wake...)
	return len(wake), more, nil
}
