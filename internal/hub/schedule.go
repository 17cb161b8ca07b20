package hub

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Every new agent gets a place in the nudge schedule (checked at the next
// tick, which computes when it next needs looking at).
func init() {
	hookInstallers = append(hookInstallers, func(s *Service) {
		s.hooks.AgentCreated = append(s.hooks.AgentCreated, func(_ context.Context, tx Tx, a *Agent) error {
			return tx.ScheduleAgentCheck(a.ID, a.CreatedAt)
		})
	})
}

// This file holds what the orchestrator's operations share: the settings it
// publishes for the admin views and a helper to run many small writes at
// once.

// ScheduleSettings are the orchestrator's tunables that admin views need
// too (the reason a pulse is blocked depends on the busy window). The
// orchestrator publishes them in the store at start-up (PublishScheduleSettings).
type ScheduleSettings struct {
	TickInterval      time.Duration // how often the orchestrator ticks
	BeatInterval      time.Duration // beat period (5m)
	InactivityTimeout time.Duration // nudge after this long without conscious activity (10m)
	MentionAge        time.Duration // nudge about unread mentions older than this (10m)
	NudgeMaxBackoff   time.Duration // the longest wait between two nudges of one episode (4h)
	PulseBusyWindow   time.Duration // a call this recent means the agent is busy (30s)
	BatchLimit        int           // due items handled per step and tick (500)
}

// DefaultScheduleSettings returns the defaults of SPEC §6.
func DefaultScheduleSettings() ScheduleSettings {
	return ScheduleSettings{
		TickInterval:      5 * time.Second,
		BeatInterval:      DefaultBeatInterval,
		InactivityTimeout: 10 * time.Minute,
		MentionAge:        10 * time.Minute,
		NudgeMaxBackoff:   4 * time.Hour,
		PulseBusyWindow:   30 * time.Second,
		BatchLimit:        500,
	}
}

// Validate returns EINVALID naming the first setting out of range.
func (c ScheduleSettings) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"tick-interval", c.TickInterval},
		{"beat-interval", c.BeatInterval},
		{"inactivity-timeout", c.InactivityTimeout},
		{"mention-age", c.MentionAge},
		{"nudge-max-backoff", c.NudgeMaxBackoff},
		{"pulse-busy-window", c.PulseBusyWindow},
	} {
		if f.d <= 0 {
			return Errorf(EINVALID, "%s is %s: it must be a positive duration such as 5s or 10m", f.name, f.d)
		}
	}
	if c.BatchLimit <= 0 {
		return Errorf(EINVALID, "batch limit is %d: it must be positive", c.BatchLimit)
	}
	return nil
}

const metaPulseBusyWindow = "pulse_busy_window"

// PublishScheduleSettings stores the settings the admin views read (the
// beat interval is saved with the beat state).
func (s *Service) PublishScheduleSettings(ctx context.Context, c ScheduleSettings) error {
	return s.store.Update(ctx, func(tx Tx) error {
		return tx.SetMeta(metaPulseBusyWindow, strconv.FormatInt(int64(c.PulseBusyWindow), 10))
	})
}

// pulseBusyWindow returns the published busy window, or the default.
func pulseBusyWindow(tx MetaTx) time.Duration {
	if v, err := tx.Meta(metaPulseBusyWindow); err == nil && v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return time.Duration(n)
		}
	}
	return DefaultScheduleSettings().PulseBusyWindow
}

// updateEach runs fn for every ID, each in its own Update, concurrently so
// that the store groups them into few commits; one failing write does not
// undo the others. It returns the IDs of the agents to wake and the
// joined errors.
func (s *Service) updateEach(ctx context.Context, ids []int64, fn func(tx Tx, id int64) (wake []int64, err error)) ([]int64, error) {
	const parallel = 64
	var (
		mu    sync.Mutex
		wake  []int64
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, parallel)
	)
	for _, id := range ids {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			var w []int64
			err := s.store.Update(ctx, func(tx Tx) (err error) {
				w, err = fn(tx, id)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			wake = append(wake, w...)
		}()
	}
	wg.Wait()
	return wake, errors.Join(errs...)
}

// lastCallForBusy returns when the agent last made a call, for the "busy"
// precondition of pulses: zero while it is parked in WaitForMessages, as an
// agent waiting for messages is not busy with its own work.
func (s *Service) lastCallForBusy(agentID int64) time.Time {
	if s.waiters.AgentCount(agentID) > 0 {
		return time.Time{}
	}
	t, _ := s.presence.LastCall(agentID)
	return t
}

// Event kinds recorded by the orchestrator.
const (
	EventNudge        EventKind = "nudge"         // a nudge was sent
	EventPulse        EventKind = "pulse"         // a heartbeat pulse was delivered
	EventCronDisabled EventKind = "cron_disabled" // a cron job was disabled by its errors
)
