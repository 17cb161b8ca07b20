package hub

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The orchestrator's per-agent work. Two indexed schedules keep a tick's
// cost independent of the number of agents and of history:
//
//   - health: liveness.next_eval_at (the liveness slice's, set by every
//     liveness write from EvaluateHealth) — SweepHealth re-evaluates the
//     agents whose result can change by itself now, records transitions and
//     expires strict deep work;
//   - nudges: agent_checks.next_check_at — CheckNudges looks at the agents
//     that may need a nudge now. Input can only move a nudge later, except
//     where a call or a mention moves it earlier: FlushPresence and
//     ScanMentions lower next_check_at for those agents.

// idleRecheck is the longest an agent goes without a nudge check when
// nothing is scheduled (a safety net).
const idleRecheck = 24 * time.Hour

// metaMentionCursor is the meta key of the last message ID ScanMentions saw.
const metaMentionCursor = "nudge_mention_cursor"

// SweepHealth re-evaluates up to limit agents whose next health evaluation
// is due at now (SweepLiveness: a strict deep work past its end is expired,
// a changed health is recorded, the next evaluation time stored), in one
// transaction. It returns how many agents were evaluated and how many
// events were recorded; more is true when the batch was full.
func (s *Service) SweepHealth(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error) {
	var ids []int64
	err = s.store.View(ctx, func(tx Tx) (err error) {
		ids, err = tx.DueLiveness(now, limit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, 0, false, err
	}
	var mu sync.Mutex // updateEach may run fn concurrently
	evaluated, events = 0, 0
	_, err = s.updateBatch(ctx, ids, func(tx Tx, id int64) ([]int64, error) {
		a, err := tx.AgentByID(id)
		if ErrorCode(err) == ENOTFOUND {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		sw, err := s.SweepLiveness(tx, a, now)
		if err != nil {
			return nil, fmt.Errorf("health of %s: %w", a.Name, err)
		}
		mu.Lock()
		evaluated++
		events += len(sw.Events)
		mu.Unlock()
		return nil, nil
	})
	if err != nil {
		return evaluated, events, false, err
	}
	return evaluated, events, len(ids) == limit, nil
}

// NudgeResult counts what CheckNudges did.
type NudgeResult struct {
	Checked int // agents looked at
	Nudged  int // nudges sent
}

// CheckNudges looks at up to set.BatchLimit agents whose nudge check is due
// at now and nudges those that need it. more is true when the batch was full.
func (s *Service) CheckNudges(ctx context.Context, now time.Time, set ScheduleSettings) (_ NudgeResult, more bool, _ error) {
	var ids []int64
	err := s.store.View(ctx, func(tx Tx) (err error) {
		ids, err = tx.DueAgentChecks(now, set.BatchLimit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return NudgeResult{}, false, err
	}
	wake, err := s.updateBatch(ctx, ids, func(tx Tx, id int64) ([]int64, error) {
		return s.checkNudge(tx, id, now, set)
	})
	s.waiters.Notify(wake...)
	return NudgeResult{Checked: len(ids), Nudged: len(wake)}, len(ids) == set.BatchLimit, err
}

// checkNudge looks at one agent inside tx and returns the agents to wake
// (the agent itself when it was nudged).
func (s *Service) checkNudge(tx Tx, id int64, now time.Time, set ScheduleSettings) ([]int64, error) {
	a, err := tx.AgentByID(id)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil // removed meanwhile; its check row went with it
	} else if err != nil {
		return nil, err
	}
	c, err := tx.AgentCheck(id)
	if err != nil {
		return nil, err
	}
	c.AgentID = id
	if a.Disabled() {
		c.NextCheckAt = now.Add(idleRecheck)
		return nil, tx.PutAgentCheck(c)
	}
	in, err := s.nudgeInput(tx, a, now)
	if err != nil {
		return nil, err
	}
	d := DecideNudge(c, in, now, set)
	c = d.Check
	var wake []int64
	if d.Nudge {
		if _, wake, err = s.postNudge(tx, a, d.Text, now); err != nil {
			return nil, fmt.Errorf("nudge %s: %w", a.Name, err)
		}
		if err := s.RecordEvent(tx, id, EventNudge, d.Reason+": "+d.Text, now); err != nil {
			return nil, err
		}
	}
	c.NextCheckAt = d.NextAt
	if c.NextCheckAt.IsZero() || c.NextCheckAt.Sub(now) > idleRecheck {
		c.NextCheckAt = now.Add(idleRecheck)
	}
	if !c.NextCheckAt.After(now) {
		c.NextCheckAt = now.Add(time.Second)
	}
	return wake, tx.PutAgentCheck(c)
}

// earliest returns the earliest non-zero time of ts (zero when all are).
func earliest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// nudgeInput returns what DecideNudge needs about agent a at now, read
// inside tx: its last conscious activity, the strict deep work in force and
// its unread mentions.
func (s *Service) nudgeInput(tx Tx, a *Agent, now time.Time) (NudgeInput, error) {
	st, err := tx.LivenessState(a.ID)
	if err != nil {
		return NudgeInput{}, err
	}
	in := NudgeInput{AgentName: a.Name, LastActivity: st.LastConsciousActivity(), Locale: s.locale(a), Location: s.cfg.Location}
	if dw := st.ActiveDeepWork; dw != nil && dw.Mode == DeepWorkStrict && dw.InForce(now) {
		in.StrictUntil = dw.EndsAt
	}
	if in.UnreadMentions, in.OldestMention, err = tx.UnreadMentions(a.ID, a.ReadUpTo); err != nil {
		return NudgeInput{}, err
	}
	return in, nil
}

// ScanMentions looks at the mentions posted since the last scan and moves
// the mentioned agents' checks to when those mentions become nudge-worthy.
func (s *Service) ScanMentions(ctx context.Context, set ScheduleSettings) error {
	var cursor int64
	var ds []MentionDelivery
	fresh := false
	err := s.store.View(ctx, func(tx Tx) error {
		v, err := tx.Meta(metaMentionCursor)
		if err != nil {
			return err
		}
		if v == "" {
			// First run: mentions already there are found by each agent's
			// first check (UnreadMentions), so start from the newest.
			fresh = true
			cursor, err = tx.MaxMessageID()
			return err
		}
		if cursor, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("meta %s = %q: %w", metaMentionCursor, v, err)
		}
		ds, err = tx.MentionsAfter(cursor, 10*set.BatchLimit)
		return err
	})
	if err != nil || (!fresh && len(ds) == 0) {
		return err
	}
	if len(ds) > 0 {
		cursor = ds[len(ds)-1].MessageID
	}
	return s.store.Update(ctx, func(tx Tx) error {
		for _, d := range ds {
			if err := tx.ScheduleAgentCheck(d.AgentID, d.CreatedAt.Add(set.MentionAge)); err != nil {
				return err
			}
		}
		return tx.SetMeta(metaMentionCursor, strconv.FormatInt(cursor, 10))
	})
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
		for _, t := range touches {
			if err := tx.ScheduleAgentCheck(t.AgentID, t.LastSeenAt.Add(set.InactivityTimeout)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.presence.Unflush(touches)
		return 0, fmt.Errorf("flush presence: %w", err)
	}
	return len(touches), nil
}

// LoadBeat sets the in-memory beat counter from the store (at start-up, so
// that calls made before the first tick read the right beat).
func (s *Service) LoadBeat(ctx context.Context) error {
	return s.store.View(ctx, func(tx Tx) error {
		st, _, ok, err := LoadBeatState(tx)
		if ok {
			s.SetBeat(max(s.Beat(), st.Beat))
		}
		return err
	})
}

// AdvanceBeat moves the global beat counter forward by the beats due at
// now, persists it and returns the state and how many beats passed. The
// first call on a new hub starts the counter at 0.
func (s *Service) AdvanceBeat(ctx context.Context, now time.Time, interval time.Duration) (BeatState, int64, error) {
	if interval <= 0 {
		return BeatState{}, 0, Errorf(EINVALID, "beat interval %s must be positive", interval)
	}
	var st BeatState
	var saved time.Duration
	var ok bool
	err := s.store.View(ctx, func(tx Tx) (err error) {
		st, saved, ok, err = LoadBeatState(tx)
		return err
	})
	if err != nil {
		return BeatState{}, 0, err
	}
	if !ok {
		st = NewBeatState(now)
	}
	st, n := AdvanceBeats(st, interval, now)
	if ok && n == 0 && saved == interval {
		s.SetBeat(max(s.Beat(), st.Beat))
		return st, 0, nil
	}
	if err := s.store.Update(ctx, func(tx Tx) error { return SaveBeatState(tx, st, interval) }); err != nil {
		return BeatState{}, 0, err
	}
	s.SetBeat(st.Beat)
	return st, n, nil
}
