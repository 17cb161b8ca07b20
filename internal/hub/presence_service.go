package hub

import (
	"context"
	"fmt"
	"slices"
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
func (s *Liveness) PresenceOf(a *Agent) AgentPresence {
	return s.presenceAt(a, s.clock.Now())
}

func (s *core) presenceAt(a *Agent, now time.Time) AgentPresence {
	lastCall, beat := s.presence.LastCall(a.ID)
	p := AgentPresence{LastSeenAt: a.LastSeenAt, LastInteractionBeat: max(beat, a.LastInteractionBeat)}
	if lastCall.After(p.LastSeenAt) {
		p.LastSeenAt = lastCall
	}
	p.SinceLast = SinceLast(s.beat.Load(), p.LastInteractionBeat)
	parked := s.waiters.AgentCount(a.ID)
	p.State = DecidePresence(p.LastSeenAt, parked, now, s.cfg.Health)
	if parked == 0 && SessionEnded(p.LastSeenAt, later(a.SessionEndedAt, s.presence.Ended(a.ID))) {
		p.State = PresenceOffline
	}
	return p
}

// FlushPresence writes the last-seen times, interaction beats and session
// ends recorded in memory since the last flush, brings back the retired
// agents among the callers (retire.go), and writes the paths this process
// opened, closed or saw (reachability.go); then it reads the paths the
// other processes wrote. A call can make a nudge due earlier than
// scheduled (an activity log that ends strict deep work early), so each
// caller's nudge check is moved to its call plus the inactivity timeout
// when that is sooner (usually it is not, and nothing changes). It returns
// how many agents were flushed.
func (s *Liveness) FlushPresence(ctx context.Context, now time.Time, set ScheduleSettings) (int, error) {
	touches := s.presence.Flush()
	rows := s.paths.Flush(now)
	if len(touches) > 0 || len(rows) > 0 {
		err := update(ctx, s.store, func(tx livenessTx) error {
			if len(rows) > 0 {
				if err := tx.PutPaths(rows, now); err != nil {
					return err
				}
			}
			if len(touches) == 0 {
				return nil
			}
			if err := tx.TouchAgents(touches); err != nil {
				return err
			}
			if err := returnAgents(tx, touches, now); err != nil {
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
			s.paths.Unflush(rows)
			return 0, fmt.Errorf("flush presence: %w", err)
		}
	}
	if err := s.loadPaths(ctx); err != nil {
		return len(touches), fmt.Errorf("read the paths of other replicas: %w", err)
	}
	return len(touches), nil
}

// maxPresenceNames caps the online and waiting lists of a status.
const maxPresenceNames = 100

// onlineNames are the agents of one project that are active or waiting:
// sorted, each list at most maxPresenceNames long.
type onlineNames struct{ online, waiting []string }

// onlineByProject returns who is active or waiting, by project,
// recomputed at most once a second from memory (no store read): a status
// is part of every wait reply, and 10,000 waiters woken at once must not
// each walk every agent. The lists' age is taken on the hub's clock with
// the lock held, not at the caller's start: on a busy hub a status waits
// for its read, then for this lock, and each waiter must not walk every
// agent again because it started before the lists were made.
func (s *Liveness) onlineByProject() map[string]onlineNames {
	s.onlineMu.Lock()
	defer s.onlineMu.Unlock()
	now := s.clock.Now()
	if age := now.Sub(s.onlineAt); !s.onlineAt.IsZero() && age >= 0 && age < time.Second {
		return s.online
	}
	waitingIDs := s.waiters.Agents()
	isWaiting := make(map[int64]bool, len(waitingIDs))
	for _, id := range waitingIDs {
		isWaiting[id] = true
	}
	by := map[string]onlineNames{}
	s.presence.mu.Lock()
	for id, e := range s.presence.m {
		if !isWaiting[id] && (now.Sub(e.lastCall) >= s.cfg.Health.IdleAfter || SessionEnded(e.lastCall, e.ended)) {
			continue
		}
		l := by[e.project]
		l.online = append(l.online, e.name)
		if isWaiting[id] {
			l.waiting = append(l.waiting, e.name)
		}
		by[e.project] = l
	}
	s.presence.mu.Unlock()
	for p, l := range by {
		by[p] = onlineNames{online: firstNames(l.online), waiting: firstNames(l.waiting)}
	}
	s.online, s.onlineAt = by, now
	return by
}

// firstNames sorts names and keeps the first maxPresenceNames.
func firstNames(names []string) []string {
	slices.Sort(names)
	return names[:min(len(names), maxPresenceNames)]
}

// onlineNamesFor returns who caller may see active or waiting: the agents
// of its project and of the projects linked to it (the links are read
// only when someone of another project is online).
func (s *Liveness) onlineNamesFor(tx linkedProjectsTx, caller *Agent) (online, waiting []string, err error) {
	by := s.onlineByProject()
	home := ProjectOr(caller.Project)
	projects := []string{home}
	if _, ok := by[home]; len(by) > 1 || (len(by) == 1 && !ok) {
		linked, err := tx.LinkedProjects(home)
		if err != nil {
			return nil, nil, err
		}
		projects = append(projects, linked...)
	}
	for _, p := range projects {
		online = append(online, by[p].online...)
		waiting = append(waiting, by[p].waiting...)
	}
	if len(projects) > 1 {
		online, waiting = firstNames(online), firstNames(waiting)
	}
	return online, waiting, nil
}
