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
//
// SweepHealth and CheckNudges (sweep_batch.go) take their due agents in
// batches; this file holds the one-agent-at-a-time fallback and the rest.

// idleRecheck is the longest an agent goes without a nudge check when
// nothing is scheduled (a safety net).
const idleRecheck = 24 * time.Hour

// metaMentionCursor is the meta key of the last message ID ScanMentions saw.
const metaMentionCursor = "nudge_mention_cursor"

// sweepHealthEach is SweepHealth one agent at a time, each in its own
// write (SweepLiveness): the fallback when the batch fails, so that one
// agent whose rows cannot be read or written does not hold up the others.
func (s *Service) sweepHealthEach(ctx context.Context, now time.Time, limit int) (evaluated, events int, more bool, err error) {
	var ids []int64
	err = s.store.View(ctx, func(tx Tx) (err error) {
		ids, err = tx.DueLiveness(now, limit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, 0, false, err
	}
	var mu sync.Mutex // updateEach runs fn concurrently
	_, err = s.updateEach(ctx, ids, func(tx Tx, id int64) ([]int64, error) {
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

// checkNudgesEach is CheckNudges one agent at a time, each in its own
// write: the fallback when the batch fails.
func (s *Service) checkNudgesEach(ctx context.Context, now time.Time, set ScheduleSettings) (_ NudgeResult, more bool, _ error) {
	var ids []int64
	err := s.store.View(ctx, func(tx Tx) (err error) {
		ids, err = tx.DueAgentChecks(now, set.BatchLimit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return NudgeResult{}, false, err
	}
	wake, err := s.updateEach(ctx, ids, func(tx Tx, id int64) ([]int64, error) {
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
	var in NudgeInput
	if !a.Disabled() {
		if in, err = s.nudgeInput(tx, a, now); err != nil {
			return nil, err
		}
	}
	c, post, ev, err := s.applyNudge(a, c, in, now, set)
	if err != nil {
		return nil, err
	}
	var wake []int64
	if post != nil {
		if err := tx.InsertMessage(post.m, post.ds); err != nil {
			return nil, fmt.Errorf("nudge %s: %w", a.Name, err)
		}
		wake = []int64{a.ID}
	}
	if ev != nil {
		if err := tx.InsertEvent(ev); err != nil {
			return nil, err
		}
	}
	return wake, tx.PutAgentCheck(c)
}

// nudgePost is a nudge message to insert with its deliveries.
type nudgePost struct {
	m  *Message
	ds []Delivery
}

// applyNudge applies the nudge rules to agent a with check c and input in
// (unused when a is disabled) at now. It returns the check to store, the
// nudge message to post (nil when none; when there is one, a is to be
// woken) and the event to record with it; the caller writes them, so that
// it may batch them.
func (s *Service) applyNudge(a *Agent, c AgentCheck, in NudgeInput, now time.Time, set ScheduleSettings) (AgentCheck, *nudgePost, *Event, error) {
	if a.Disabled() {
		c.NextCheckAt = now.Add(idleRecheck)
		return c, nil, nil, nil
	}
	d := DecideNudge(c, in, now, set)
	c = d.Check
	var post *nudgePost
	var ev *Event
	if d.Nudge {
		m, ds, err := s.nudgeMessage(a, d.Text, now)
		if err != nil {
			return c, nil, nil, fmt.Errorf("nudge %s: %w", a.Name, err)
		}
		post = &nudgePost{m, ds}
		ev = &Event{AgentID: a.ID, Kind: EventNudge, Detail: d.Reason + ": " + d.Text, CreatedAt: now}
	}
	c.NextCheckAt = d.NextAt
	if c.NextCheckAt.IsZero() || c.NextCheckAt.Sub(now) > idleRecheck {
		c.NextCheckAt = now.Add(idleRecheck)
	}
	if !c.NextCheckAt.After(now) {
		c.NextCheckAt = now.Add(time.Second)
	}
	return c, post, ev, nil
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
	n, oldest, err := tx.UnreadMentions(a.ID, a.ReadUpTo)
	if err != nil {
		return NudgeInput{}, err
	}
	return s.makeNudgeInput(a, st, n, oldest, now), nil
}

// makeNudgeInput returns what DecideNudge needs about agent a at now from
// its liveness state st and its unread mentions (n, the oldest at oldest).
func (s *Service) makeNudgeInput(a *Agent, st *LivenessState, n int64, oldest time.Time, now time.Time) NudgeInput {
	in := NudgeInput{AgentName: a.Name, LastActivity: st.LastConsciousActivity(), Locale: s.locale(a), Location: s.cfg.Location,
		UnreadMentions: n, OldestMention: oldest}
	if dw := st.ActiveDeepWork; dw != nil && dw.Mode == DeepWorkStrict && dw.InForce(now) {
		in.StrictUntil = dw.EndsAt
	}
	return in
}

// ScanMentions looks at the mentions posted since the last scan and moves
// the mentioned agents' checks to when those mentions become nudge-worthy.
// The cursor moves past every message the scan covered, nudges included
// (they are not mentions to schedule), so each scan reads only what was
// posted since the last one, however many nudges came before.
func (s *Service) ScanMentions(ctx context.Context, set ScheduleSettings) error {
	var cursor, next int64
	var ds []MentionDelivery
	fresh := false
	limit := 10 * set.BatchLimit
	err := s.store.View(ctx, func(tx Tx) error {
		v, err := tx.Meta(metaMentionCursor)
		if err != nil {
			return err
		}
		if v == "" {
			// First run: mentions already there are found by each agent's
			// first check (UnreadMentions), so start from the newest.
			fresh = true
			next, err = tx.MaxMessageID()
			return err
		}
		if cursor, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("meta %s = %q: %w", metaMentionCursor, v, err)
		}
		if ds, err = tx.MentionsAfter(cursor, limit); err != nil {
			return err
		}
		if len(ds) == limit { // more to scan: go on from the last one seen
			next = ds[len(ds)-1].MessageID
			return nil
		}
		// Every message up to the newest in this snapshot was scanned (a
		// message that commits later gets a higher ID: one writer).
		next, err = tx.MaxMessageID()
		next = max(next, cursor)
		return err
	})
	if err != nil || (!fresh && next == cursor) {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		for _, d := range ds {
			if err := tx.ScheduleAgentCheck(d.AgentID, d.CreatedAt.Add(set.MentionAge)); err != nil {
				return err
			}
		}
		return tx.SetMeta(metaMentionCursor, strconv.FormatInt(next, 10))
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
		checks := make([]AgentTime, len(touches))
		for i, t := range touches {
			checks[i] = AgentTime{AgentID: t.AgentID, At: t.LastSeenAt.Add(set.InactivityTimeout)}
		}
		return tx.ScheduleAgentChecks(checks)
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
