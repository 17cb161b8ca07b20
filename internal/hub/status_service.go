package hub

import (
	"context"
)

// statusHealth fills the health and deep work of a status.
func (s *Liveness) statusHealth(tx livenessStateTx, a *Agent, out *Status) error {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	out.Health, _ = EvaluateHealth(*st, now, s.cfg.Health, s.locale(a))
	out.DeepWork = deepWorkView(st.ActiveDeepWork, now)
	return nil
}

// Status returns the caller's status.
func (s *Liveness) Status(ctx context.Context, caller *Agent) (*Status, error) {
	now := s.clock.Now()
	st := &Status{Agent: caller.Name, Time: now, Beat: s.beat.Load(), RateLimitedUntil: s.limits.until(caller.ID, now)}
	err := view(ctx, s.store, func(tx livenessTx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		st.CurrentHeartbeatID = a.CurrentHeartbeatID
		if st.Unread, st.Mentions, st.LatestMessageID, err = tx.InboxCounts(a.ID, a.ReadUpTo); err != nil {
			return err
		}
		if st.LatestMessageID == 0 {
			st.LatestMessageID = a.ReadUpTo
		}
		st.SinceLast = SinceLast(st.Beat, caller.LastInteractionBeat)
		st.SinceLastReading = BeatReading(st.SinceLast)
		if err := s.statusHealth(tx, a, st); err != nil {
			return err
		}
		st.Online, st.Waiting, err = s.onlineNamesFor(tx, caller)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
