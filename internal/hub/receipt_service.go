package hub

import (
	"context"
	"fmt"
	"time"
)

// Receipts is the service of delivery receipts: delivered, in context,
// read and acknowledged per recipient; what each path may carry; the
// overdue acknowledgements, the notices of messages still queued and the
// digests of deep work.
type Receipts struct {
	*core
	store      txs[receiptsTx] // the store methods it uses
	deliveries deliveryLog     // delivery marks of replies sent, written by Waits.Run; the paths' claims
}

// receiptsTx is what the receipts service reads and writes in one transaction:
// the store methods it uses, by their group.
type receiptsTx interface {
	// AgentTx
	AgentByName(name string) (*Agent, error)
	// DigestTx
	HeldDue(now time.Time, limit int) ([]HeldMessage, error)
	ReleaseHeld(agentID int64, ids []int64) error
	// EventTx
	InsertEvents(es []Event) error
	// MessageTx
	InsertMessages(ms []*Message, ds [][]Delivery) error
	MessageByID(id int64) (*Message, error)
	// NoticeTx
	MarkQueueChecked(ids []int64) error
	NoticeCounts(agentIDs []int64) (map[int64]NoticeCount, error)
	PutNoticeCounts(cs map[int64]NoticeCount) error
	QueuedDue(cutoff time.Time, limit int) ([]*Message, error)
	// ReceiptTx
	Acknowledge(agentID, messageID int64, at time.Time) (time.Time, bool, error)
	DeliveredTo(agentID int64, ids []int64) ([]int64, error)
	HoldDeliveries(agentID int64, ids []int64) error
	MarkDelivered(agentID int64, ids []int64, at time.Time) error
	MarkInContext(agentID int64, ids []int64, at time.Time, via Via) error
	OverdueAcks(cutoff, now time.Time, limit int) ([]PendingAck, error)
	Receipts(messageID int64) ([]Receipt, error)
	RecordAckNudges(agentID int64, ids []int64, at time.Time) error
}

// NewReceipts returns the receipts' service.
func NewReceipts(c *Core) *Receipts {
	r := &Receipts{core: c.core, store: txsOf[receiptsTx](c.store)}
	r.deliveries.kick = make(chan struct{}, 1)
	return r
}

// ReceiptTx stores the receipts of deliveries: when each left the hub, the
// read cursor's moves and the acknowledgements.
type ReceiptTx interface {
	// MarkDelivered sets the delivery time of agentID's deliveries of ids
	// that have none yet to at.
	MarkDelivered(agentID int64, ids []int64, at time.Time) error
	// MarkInContext sets the in-context time and path of agentID's
	// deliveries of ids that have none yet to at and via, and their
	// delivery time to at where they have none.
	MarkInContext(agentID int64, ids []int64, at time.Time, via Via) error
	// DeliveredTo returns those of ids that are messages delivered to
	// agentID, in any order.
	DeliveredTo(agentID int64, ids []int64) ([]int64, error)
	// HoldDeliveries marks agentID's deliveries of ids held for the digest
	// of its deep work (digest.go), unless they are in its context or
	// were held before.
	HoldDeliveries(agentID int64, ids []int64) error
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

// Confirm records that the messages named by ids, delivered to the caller,
// reached its context through via, a path that confirms what its host took
// (hook, channel, tmux): each moves to in context once (the first path and
// time stay), and the path counts as seen. Errors: EINVALID (no ID, too
// many, malformed, a path the hub records itself), ENOTFOUND (an ID not
// delivered to the caller: nothing is recorded).
func (s *Receipts) Confirm(ctx context.Context, caller *Agent, ids []string, via string) error {
	v, err := ParseVia("via", via, ViaHook, ViaChannel, ViaTmux)
	if err != nil {
		return err
	}
	if v == 0 {
		return Errorf(EINVALID, "via is empty: give the path that carried the messages, hook, channel or tmux (waits and reads are recorded by the hub itself)")
	}
	nums, err := parseIDList(ids, MaxConfirmIDs, "confirm")
	if err != nil {
		return err
	}
	var found []int64
	if err := view(ctx, s.store, func(tx receiptsTx) (err error) { found, err = tx.DeliveredTo(caller.ID, nums); return err }); err != nil {
		return err
	}
	if len(found) < len(nums) {
		have := make(map[int64]bool, len(found))
		for _, id := range found {
			have[id] = true
		}
		for _, id := range nums {
			if !have[id] {
				return Errorf(ENOTFOUND, "message %d is not among the messages delivered to you: nothing was confirmed", id)
			}
		}
	}
	now := s.clock.Now()
	s.paths.Seen(caller.ID, v, now)
	return s.Settle(ctx, caller.ID, nums, v, now)
}

// parseIDList parses the message IDs of a call that takes 1 to limit of
// them (verb names what the call does with them), without repeats.
// Errors: EINVALID.
func parseIDList(ids []string, limit int, verb string) ([]int64, error) {
	if len(ids) == 0 {
		return nil, Errorf(EINVALID, "ids is empty: give the IDs of the messages to %s", verb)
	}
	if len(ids) > limit {
		return nil, Errorf(EINVALID, "ids names %d messages; the limit is %d per call", len(ids), limit)
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
	return nums, nil
}

// Acknowledge acknowledges the messages named by ids for the caller, all or
// none. Acknowledging again keeps the first time (First is then false); a
// message that did not ask for an acknowledgement may be acknowledged too.
// Errors: EINVALID (no ID, too many, malformed), ENOTFOUND (an ID the
// caller did not receive: whether it exists is not told).
func (s *Receipts) Acknowledge(ctx context.Context, caller *Agent, ids []string) ([]Ack, error) {
	nums, err := parseIDList(ids, MaxAckIDs, "acknowledge")
	if err != nil {
		return nil, err
	}
	if err := s.FlushDeliveries(ctx); err != nil { // an earlier delivery keeps its time
		return nil, err
	}
	now := s.clock.Now()
	var acks []Ack
	err = update(ctx, s.store, func(tx receiptsTx) error {
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
	if err := s.FlushDeliveries(ctx); err != nil { // the replies this process already sent
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
		groups := groupPendingAcks(ps)
		agents := make([]int64, len(groups))
		for i, g := range groups {
			agents[i] = g[0].AgentID
		}
		allowed, err := allowNotices(tx, agents, now, set)
		if err != nil {
			return err
		}
		for i, g := range groups {
			a := &Agent{ID: g[0].AgentID, Name: g[0].Agent, Locale: g[0].Locale}
			text := ackOverdueText(g, s.locale(a), now)
			if !allowed[i] {
				ids := make([]int64, len(g))
				for j, p := range g {
					ids[j] = p.MessageID
				}
				if err := tx.RecordAckNudges(a.ID, ids, now); err != nil {
					return err
				}
				evs = append(evs, newEvent(a.ID, EventNoticeDropped, now, fmt.Sprintf("notice cap (%d per hour) reached: not sent: %s", set.NoticeCap, text)))
				continue
			}
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
	return len(wake), more, nil
}
