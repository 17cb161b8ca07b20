package hub

import (
	"context"
	"fmt"
	"time"
)

// NoticeTx stores what notices need (notice.go): each agent's count of
// nudges and notices in the current hour, and which urgent or
// ack_required messages were looked at for a queued notice.
type NoticeTx interface {
	// NoticeCounts returns the stored count of each of agentIDs (the zero
	// count for one with none), by agent ID.
	NoticeCounts(agentIDs []int64) (map[int64]NoticeCount, error)
	// PutNoticeCounts stores each count of cs, by agent ID (insert or
	// replace).
	PutNoticeCounts(cs map[int64]NoticeCount) error
	// QueuedDue returns up to limit messages that are urgent or ask for an
	// acknowledgement, created at or before cutoff and not yet looked at
	// for a queued notice (MarkQueueChecked), oldest first. It reads only
	// such messages (a partial index).
	QueuedDue(cutoff time.Time, limit int) ([]*Message, error)
	// MarkQueueChecked marks messages ids looked at, so QueuedDue no
	// longer returns them.
	MarkQueueChecked(ids []int64) error
}

// EventNoticeDropped: a nudge or notice was not sent, the agent's cap of
// notices for the hour being reached.
const EventNoticeDropped EventKind = "notice_dropped"

// noticeCountsTx reads and writes agents' notice counts.
type noticeCountsTx interface {
	NoticeCounts(agentIDs []int64) (map[int64]NoticeCount, error)
	PutNoticeCounts(cs map[int64]NoticeCount) error
}

// allowNotices decides, in order, whether one more nudge or notice may go
// to each agent of ids at now under set.NoticeCap (an agent may appear
// more than once), and stores the counts of those allowed.
func allowNotices(tx noticeCountsTx, ids []int64, now time.Time, set ScheduleSettings) ([]bool, error) {
	ok := make([]bool, len(ids))
	if set.NoticeCap <= 0 {
		for i := range ok {
			ok[i] = true
		}
		return ok, nil
	}
	if len(ids) == 0 {
		return ok, nil
	}
	counts, err := tx.NoticeCounts(ids)
	if err != nil {
		return nil, err
	}
	changed := make(map[int64]NoticeCount)
	for i, id := range ids {
		var c NoticeCount
		if ok[i], c = NoticeAllowed(counts[id], now, set.NoticeCap); ok[i] {
			counts[id], changed[id] = c, c
		}
	}
	if len(changed) == 0 {
		return ok, nil
	}
	return ok, tx.PutNoticeCounts(changed)
}

// CheckQueued tells the sender of each urgent or ack_required message
// still queued (not in context, read or acknowledged) for some of its
// recipients set.QueuedNoticeAfter after the post, once per message, which
// ones and why (notice.go), and wakes it. Messages of the hub's own
// senders, and of agents gone or disabled, are looked at and left. It
// returns how many notices it sent; more is true when the batch was full.
// With QueuedNoticeAfter 0 it does nothing.
func (s *Receipts) CheckQueued(ctx context.Context, now time.Time, set ScheduleSettings) (sent int, more bool, _ error) {
	if set.QueuedNoticeAfter <= 0 {
		return 0, false, nil
	}
	cutoff := now.Add(-set.QueuedNoticeAfter)
	var due []*Message
	if err := view(ctx, s.store, func(tx receiptsTx) (err error) { due, err = tx.QueuedDue(cutoff, 1); return err }); len(due) == 0 || err != nil {
		return 0, false, err
	}
	if err := s.FlushDeliveries(ctx); err != nil { // receipts as replies sent left them
		return 0, false, err
	}
	var wake []int64
	err := update(ctx, s.store, func(tx receiptsTx) error {
		wake = wake[:0]
		msgs, err := tx.QueuedDue(cutoff, set.BatchLimit)
		if err != nil {
			return err
		}
		more = len(msgs) == set.BatchLimit
		ids := make([]int64, len(msgs))
		var ms []*Message
		var ds [][]Delivery
		var evs []Event
		for i, m := range msgs {
			ids[i] = m.ID
			n, d, ev, err := s.queuedNotice(tx, m, now, set)
			if err != nil {
				return err
			}
			if ev != nil {
				evs = append(evs, *ev)
			}
			if n != nil {
				ms, ds, wake = append(ms, n), append(ds, d), append(wake, d[0].AgentID)
			}
		}
		if err := tx.MarkQueueChecked(ids); err != nil {
			return err
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

// queuedNotice decides the notice about message m inside tx: none when no
// recipient is still queued or its sender cannot be told; else the notice
// and its event, or, past the sender's cap, only an event.
func (s *Receipts) queuedNotice(tx receiptsTx, m *Message, now time.Time, set ScheduleSettings) (*Message, []Delivery, *Event, error) {
	if m.From == SenderAdmin || m.From == SenderOrchestrator {
		return nil, nil, nil, nil
	}
	rs, err := tx.Receipts(m.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	var queued []QueuedRecipient
	for _, r := range rs {
		if r.State() == StateQueued {
			queued = append(queued, QueuedRecipient{Name: r.Agent, Reach: s.paths.Reach(r.AgentID, now)})
		}
	}
	if len(queued) == 0 {
		return nil, nil, nil, nil
	}
	sender, err := tx.AgentByName(m.From)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil, nil, nil // deleted since
	} else if err != nil {
		return nil, nil, nil, err
	}
	if sender.Disabled() {
		return nil, nil, nil, nil
	}
	text := queuedText(sender.Name, m, queued, now.Sub(m.CreatedAt), s.locale(sender), s.cfg.Location, now)
	ok, err := allowNotices(tx, []int64{sender.ID}, now, set)
	if err != nil {
		return nil, nil, nil, err
	}
	if !ok[0] {
		ev := newEvent(sender.ID, EventNoticeDropped, now, fmt.Sprintf("notice cap (%d per hour) reached: not sent: %s", set.NoticeCap, text))
		return nil, nil, &ev, nil
	}
	n, d, err := s.nudgeMessage(sender, text, now)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("queued notice to %s: %w", sender.Name, err)
	}
	ev := newEvent(sender.ID, EventNudge, now, "message still queued: "+text)
	return n, d, &ev, nil
}
