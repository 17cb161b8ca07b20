package hub

import (
	"context"
	"sort"
	"time"
)

// Status is the caller's view of the hub (the seeds' check_hub_status).
type Status struct {
	Agent              string
	Unread             int64
	Mentions           int64
	LatestMessageID    int64
	CurrentHeartbeatID string
	Beat               int64
	SinceLast          int64
	SinceLastReading   string
	Health             Health
	DeepWork           *DeepWork
	Online             []string
	Waiting            []string
	Version            string
	Time               time.Time
}

// maxPresenceNames caps the online and waiting lists of a status.
const maxPresenceNames = 100

// Status returns the caller's status.
func (s *Service) Status(ctx context.Context, caller *Agent) (*Status, error) {
	now := s.clock.Now()
	st := &Status{Agent: caller.Name, Version: Version, Time: now, Beat: s.Beat()}
	err := s.store.View(ctx, func(tx Tx) error {
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
		st.Health = Health{State: HealthHealthy}
		for _, f := range s.hooks.Status {
			if err := f(ctx, tx, a, st); err != nil {
				return err
			}
		}
		st.Online, st.Waiting, err = s.onlineNames(tx, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// onlineNames returns who is active or waiting, recomputed at most once a
// second: a status is part of every wait reply, and 10,000 waiters woken at
// once must not each walk every agent.
func (s *Service) onlineNames(tx Tx, now time.Time) (online, waiting []string, err error) {
	s.onlineMu.Lock()
	defer s.onlineMu.Unlock()
	if !s.onlineAt.IsZero() && now.Sub(s.onlineAt) < time.Second && now.After(s.onlineAt) {
		return s.online, s.waitingList, nil
	}
	waitingIDs := s.waiters.Agents()
	isWaiting := make(map[int64]bool, len(waitingIDs))
	for _, id := range waitingIDs {
		isWaiting[id] = true
	}
	onlineSet, waitingSet := map[string]bool{}, map[string]bool{}
	s.presence.mu.Lock()
	var recent []int64
	for id, e := range s.presence.m {
		if isWaiting[id] || now.Sub(e.lastCall) < s.cfg.Health.IdleAfter {
			recent = append(recent, id)
		}
	}
	s.presence.mu.Unlock()
	sort.Slice(recent, func(i, j int) bool { return recent[i] < recent[j] })
	for _, id := range recent {
		if len(onlineSet) >= maxPresenceNames {
			break
		}
		a, err := tx.AgentByID(id)
		if err != nil {
			continue // deleted meanwhile
		}
		onlineSet[a.Name] = true
		if isWaiting[id] {
			waitingSet[a.Name] = true
		}
	}
	s.online, s.waitingList, s.onlineAt = sortedNames(onlineSet), sortedNames(waitingSet), now
	return s.online, s.waitingList, nil
}

// HeartbeatResult is what Service.Heartbeat returns.
type HeartbeatResult struct {
	HeartbeatID      string
	StartedAt        time.Time
	Unread, Mentions int64
	Beat, SinceLast  int64
	SinceLastReading string
}

// Heartbeat starts a new unit of work for the caller: it sets the caller's
// current heartbeat ID to now.
func (s *Service) Heartbeat(ctx context.Context, caller *Agent) (*HeartbeatResult, error) {
	now := s.clock.Now()
	r := &HeartbeatResult{HeartbeatID: FormatHeartbeatID(now, s.cfg.Location), StartedAt: now.Truncate(time.Second), Beat: s.Beat()}
	err := s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		a.CurrentHeartbeatID, a.HeartbeatStartedAt = r.HeartbeatID, r.StartedAt
		if err := tx.UpdateAgent(a); err != nil {
			return err
		}
		for _, f := range s.hooks.Heartbeat {
			if err := f(ctx, tx, a, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Counted after the commit, on a reader: the single writer should not
	// spend time on a count that grows with the caller's unread backlog.
	err = s.store.View(ctx, func(tx Tx) error {
		a, err := tx.AgentByID(caller.ID)
		if err != nil {
			return err
		}
		r.Unread, r.Mentions, _, err = tx.InboxCounts(a.ID, a.ReadUpTo)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.SinceLast = SinceLast(r.Beat, caller.LastInteractionBeat)
	r.SinceLastReading = BeatReading(r.SinceLast)
	return r, nil
}
