package app

import (
	"context"

	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/orchestrator"
	"github.com/agenthub/hub/internal/server"
)

// scheduleSettings returns the orchestrator settings of m's flags.
func (m *Main) scheduleSettings() hub.ScheduleSettings {
	set := hub.DefaultScheduleSettings()
	if m.TickInterval > 0 {
		set.TickInterval = m.TickInterval
	}
	if m.BeatInterval > 0 {
		set.BeatInterval = m.BeatInterval
	}
	if m.InactivityTimeout > 0 {
		set.InactivityTimeout = m.InactivityTimeout
		set.MentionAge = m.InactivityTimeout
	}
	if m.MentionAge != 0 { // negative values reach the validation below
		set.MentionAge = m.MentionAge
	}
	if m.NudgeMaxBackoff != 0 {
		set.NudgeMaxBackoff = m.NudgeMaxBackoff
	}
	set.RetainMessages = m.RetainMessages
	if m.ReservationReleaseAfter != 0 { // negative values reach the validation
		set.ReservationReleaseAfter = m.ReservationReleaseAfter
	}
	if m.AckOverdue != 0 {
		set.AckOverdue = m.AckOverdue
	}
	set.RetireAfter, set.QueuedNoticeAfter, set.NoticeCap = m.RetireAfter, m.QueuedNoticeAfter, m.NoticeCap
	return set
}

// startOrchestrator starts the orchestrator loop and sets m.tickStats. Each
// process runs the loop; only the holder of the store's leader lock
// (m.leader: always this process on SQLite) ticks.
func (m *Main) startOrchestrator(ctx context.Context) error {
	if m.NoOrchestrator {
		return nil
	}
	o, err := orchestrator.New(m.Clock, orchestrator.JobsOf(m.Services), m.scheduleSettings())
	if err != nil {
		return err
	}
	o.Logger = m.Logger
	o.Leader = m.leader
	o.Timed = m.metrics.TickRan
	if err := o.Init(ctx); err != nil {
		return err
	}
	m.tickStats = func() server.TickStats {
		s := o.Stats()
		ts := server.TickStats{Ticks: s.Ticks, LastMicro: s.LastDuration.Microseconds(), LastError: s.LastError}
		if !s.LastTickAt.IsZero() {
			ts.LastAt = s.LastTickAt.UnixNano()
		}
		return ts
	}
	m.leading = func() bool { return o.Stats().Leader }
	m.goRun(func() error { return o.Run(ctx) })
	return nil
}
