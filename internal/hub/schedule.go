package hub

import "time"

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
	RetainMessages    time.Duration // delete messages older than this (0: keep all; retention.go)
	// ReservationReleaseAfter: an agent that made no call for this long
	// loses its path reservations (1h).
	ReservationReleaseAfter time.Duration
	// AckOverdue: a recipient asked to acknowledge a message is nudged
	// once when it has not this long after the post (10m).
	AckOverdue time.Duration
	// RetireAfter: an agent that made no call for this long and holds
	// nothing is retired (retire.go; a week, 0 never).
	RetireAfter time.Duration
	// QueuedNoticeAfter: the sender of an urgent or ack_required message
	// still queued for a recipient this long after the post gets one
	// notice naming them and why (notice.go; 10m, 0 never).
	QueuedNoticeAfter time.Duration
	// NoticeCap is how many nudges and notices one agent gets per clock
	// hour at most (notice.go; 6, 0 no cap).
	NoticeCap int
}

// DefaultScheduleSettings returns the defaults of SPEC §6.
func DefaultScheduleSettings() ScheduleSettings {
	return ScheduleSettings{
		TickInterval:      5 * time.Second,
		BeatInterval:      DefaultBeatInterval,
		InactivityTimeout: 10 * time.Minute,
		MentionAge:        10 * time.Minute,
		NudgeMaxBackoff:   4 * time.Hour,
		PulseBusyWindow:   DefaultPulseBusyWindow,
		BatchLimit:        500,

		ReservationReleaseAfter: time.Hour,
		AckOverdue:              10 * time.Minute,
		RetireAfter:             DefaultRetireAfter,
		QueuedNoticeAfter:       10 * time.Minute,
		NoticeCap:               DefaultNoticeCap,
	}
}

// Defaults of the delivery settings.
const (
	DefaultRetireAfter = 7 * 24 * time.Hour
	DefaultNoticeCap   = 6
)

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
		{"release-reservations-after", c.ReservationReleaseAfter},
		{"ack-overdue", c.AckOverdue},
	} {
		if f.d <= 0 {
			return Errorf(EINVALID, "%s is %s: it must be a positive duration such as 5s or 10m", f.name, f.d)
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"retire-after", c.RetireAfter}, {"queued-notice-after", c.QueuedNoticeAfter}} {
		if f.d < 0 {
			return Errorf(EINVALID, "%s is %s: give a positive duration such as 168h, or 0 to turn it off", f.name, f.d)
		}
	}
	if c.NoticeCap < 0 {
		return Errorf(EINVALID, "notice-cap is %d: give how many nudges and notices an agent may get per hour, or 0 for no cap", c.NoticeCap)
	}
	if c.BatchLimit <= 0 {
		return Errorf(EINVALID, "batch limit is %d: it must be positive", c.BatchLimit)
	}
	if c.RetainMessages != 0 && c.RetainMessages < MinRetention {
		return Errorf(EINVALID, "retain-messages is %s: give 0 to keep every message, or at least %s", c.RetainMessages, MinRetention)
	}
	return nil
}
