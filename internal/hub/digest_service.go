package hub

import (
	"context"
	"fmt"
	"time"
)

// DigestTx stores the low-priority messages held from agents' paths while
// they were in deep work (digest.go).
type DigestTx interface {
	// HeldDue returns up to limit held deliveries (HoldDeliveries) of
	// enabled agents not in deep work at now, by agent then message ID,
	// each with whether it was read or reached the agent's context since.
	// It reads only held deliveries (a partial index).
	HeldDue(now time.Time, limit int) ([]HeldMessage, error)
	// ReleaseHeld marks agentID's held deliveries of ids as digested.
	ReleaseHeld(agentID int64, ids []int64) error
}

// SendDigests sends each agent whose deep work ended one digest of the
// low-priority messages its paths held meanwhile and it has not taken in
// since (digest.go), from the orchestrator, and wakes it. A digest is not
// counted against the notice cap: it stands for many messages. It returns
// how many digests it sent; more is true when the batch was full. It looks
// for due holds in a read first and writes only when there are some: a
// hold still in memory (FlushDeliveries) is seen once written, by the
// fallback watcher or the orchestrator's beat step before this one.
func (s *Receipts) SendDigests(ctx context.Context, now time.Time, set ScheduleSettings) (sent int, more bool, _ error) {
	var due []HeldMessage
	if err := view(ctx, s.store, func(tx receiptsTx) (err error) { due, err = tx.HeldDue(now, 1); return err }); len(due) == 0 || err != nil {
		return 0, false, err
	}
	if err := s.FlushDeliveries(ctx); err != nil { // the holds and in-context marks of replies sent
		return 0, false, err
	}
	var wake []int64
	err := update(ctx, s.store, func(tx receiptsTx) error {
		wake = wake[:0]
		hs, err := tx.HeldDue(now, set.BatchLimit)
		if err != nil {
			return err
		}
		more = len(hs) == set.BatchLimit
		var ms []*Message
		var ds [][]Delivery
		var evs []Event
		for _, g := range groupHeld(hs) {
			ids := make([]int64, len(g))
			var untaken []HeldMessage
			for i, h := range g {
				ids[i] = h.MessageID
				if !h.Taken {
					untaken = append(untaken, h)
				}
			}
			if err := tx.ReleaseHeld(g[0].AgentID, ids); err != nil {
				return err
			}
			if len(untaken) == 0 {
				continue
			}
			a := &Agent{ID: g[0].AgentID, Name: g[0].Agent, Locale: g[0].Locale}
			text := digestText(untaken, s.locale(a))
			m, d, err := s.nudgeMessage(a, text, now)
			if err != nil {
				return fmt.Errorf("digest for %s: %w", a.Name, err)
			}
			ms, ds, wake = append(ms, m), append(ds, d), append(wake, a.ID)
			evs = append(evs, newEvent(a.ID, EventDigest, now, fmt.Sprintf("digest of %d low-priority messages held during deep work", len(untaken))))
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

// EventDigest: a digest of the messages held during deep work was sent.
const EventDigest EventKind = "digest"

// groupHeld groups hs, ordered by agent, by agent.
func groupHeld(hs []HeldMessage) [][]HeldMessage {
	var out [][]HeldMessage
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j].AgentID == hs[i].AgentID {
			j++
		}
		out = append(out, hs[i:j])
		i = j
	}
	return out
}
