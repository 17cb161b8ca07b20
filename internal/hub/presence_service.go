package hub

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// AgentPresence is what the hub knows of an agent's calls: the last one
// (recorded in memory since the last flush, or stored), its interaction
// beat, and the presence they make.
type AgentPresence struct {
	LastSeenAt          time.Time
	LastInteractionBeat int64
	SinceLast           int64 // beats since LastInteractionBeat
	State               PresenceState
}

// PresenceOf returns agent a's presence now (for agent views).
func (s *Service) PresenceOf(a *Agent) AgentPresence {
	return s.presenceAt(a, s.clock.Now())
}

func (s *Service) presenceAt(a *Agent, now time.Time) AgentPresence {
	lastCall, beat := s.presence.LastCall(a.ID)
	p := AgentPresence{LastSeenAt: a.LastSeenAt, LastInteractionBeat: max(beat, a.LastInteractionBeat)}
	if lastCall.After(p.LastSeenAt) {
		p.LastSeenAt = lastCall
	}
	p.SinceLast = SinceLast(s.Beat(), p.LastInteractionBeat)
	p.State = DecidePresence(p.LastSeenAt, s.waiters.AgentCount(a.ID), now, s.cfg.Health)
	return p
}

// FlushPresence writes the last-seen times and interaction beats recorded
// in memory since the last flush. A call can make a nudge due earlier than
// scheduled (an activity log that ends strict deep work early), so each
// caller's nudge check is moved to its call plus the inactivity timeout
// when that is sooner (usually it is not, and nothing changes). It returns
// how many agents were flushed.
func (s *Service) FlushPresence(ctx context.Context, now time.Time, set ScheduleSettings) (int, error) {
	touches := s.presence.Flush()
	if len(touches) == 0 {
		return 0, nil
	}
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.TouchAgents(touches); err != nil {
			return err
		}
		checks := make([]AgentTime, len(touches))
		for i, t := range touches {
			checks[i] = AgentTime{AgentID: t.AgentID, At: t.LastSeenAt.Add(set.InactivityTimeout)}
		}
		return tx.ScheduleAgentChecks(checks)
	})
	if err != nil {
		if ErrorCode(err) == ENOTFOUND { // an agent deleted, its notice missed
			s.forgetDeleted(ctx, touches)
		}
		s.presence.Unflush(touches)
		return 0, fmt.Errorf("flush presence: %w", err)
	}
	return len(touches), nil
}

// maxPresenceNames caps the online and waiting lists of a status.
const maxPresenceNames = 100

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
