package hub

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Heartbeat pulses: an agent opts in to be woken on a schedule with a
// standing instruction, like HEARTBEAT.md. The orchestrator checks
// ShouldPulse each tick; the agent answers the pulse and
// PulseResponseOutcome decides what is shown.

// Pulse defaults and limits.
const (
	DefaultPulseInterval   = 30 * time.Minute
	DefaultPulseBusyWindow = 30 * time.Second // a call this recent means the agent is busy
	MinPulseInterval       = time.Minute      // a shorter one would flood the agent
	MaxPulseInterval       = 7 * 24 * time.Hour
	// HeartbeatOK is the reply by which an agent says it has nothing to report.
	HeartbeatOK = "HEARTBEAT_OK"
)

// Reasons ShouldPulse gives when a pulse does not run. They are stable keys
// shown by `hubctl pulses` and the API.
const (
	PulseReady              = "ready"                // every precondition holds
	PulseDisabled           = "disabled"             // the agent has not opted in
	PulseInstructionsEmpty  = "no_instructions"      // nothing to tell the agent
	PulseIntervalNotElapsed = "not_due"              // the previous pulse is too recent
	PulseOutsideActiveHours = "outside_active_hours" // now is outside the configured window
	PulseUnanswered         = "unanswered"           // the previous pulse awaits the agent's answer
	PulseAgentBusy          = "busy"                 // the agent made a call within the busy window
)

// Outcomes of a pulse reply (PulseResponseOutcome).
const (
	PulseOutcomeOK        = "suppressed_ok"        // nothing to report: suppressed
	PulseOutcomeDuplicate = "suppressed_duplicate" // same text as the previous output: suppressed
	PulseOutcomePosted    = "posted"               // posted to the output channel
)

// PulseConfig is an agent's opt-in pulse schedule.
type PulseConfig struct {
	AgentID       int64
	Enabled       bool
	Interval      time.Duration // at least MinPulseInterval
	ActiveHours   string        // "HH:MM-HH:MM", may wrap midnight; "" = all day
	TimeZone      string        // IANA name for ActiveHours; "" = the hub's zone
	Instructions  string        // the standing instruction (HEARTBEAT.md); empty blocks pulses
	OutputChannel string        // "#name" for meaningful replies; "" = DefaultPulseChannel
	UpdatedAt     time.Time
}

// PulseState is what the orchestrator remembers about an agent's pulses.
type PulseState struct {
	AgentID       int64
	LastPulseAt   time.Time // zero: never pulsed
	Unanswered    bool      // the last pulse awaits the agent's answer
	LastOutput    string    // the last meaningful reply posted, for duplicate suppression
	LastOutcome   string    // PulseOutcome* of the last reply
	LastRespondAt time.Time
	PulseCount    int64
	LastReason    string // ShouldPulse reason at the last check, for `hubctl pulses`
	LastCheckedAt time.Time
}

// DefaultPulseChannel returns the output channel of an agent's pulses when
// none is configured: "#<agent>-heartbeat".
func DefaultPulseChannel(agentName string) string {
	return "#" + agentName + "-heartbeat"
}

// ActiveHours is a daily window in minutes after local midnight. When
// End <= Start the window wraps midnight (22:00-06:00). The zero value is not
// a window: use AllDay.
type ActiveHours struct {
	Start, End int // minutes of the day, Start in [0,1440), End in (0,1440]
	all        bool
}

// AllDay is the window that contains every instant.
var AllDay = ActiveHours{Start: 0, End: 24 * 60, all: true}

// ParseActiveHours parses "HH:MM-HH:MM" (or "H-H" for whole hours). The end
// may be "24:00". An end earlier than the start wraps midnight. An empty
// string is AllDay. It returns EINVALID naming the expected format.
func ParseActiveHours(s string) (ActiveHours, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return AllDay, nil
	}
	bad := func(why string) (ActiveHours, error) {
		return ActiveHours{}, Errorf(EINVALID, "active hours %q: %s; expected \"HH:MM-HH:MM\" such as \"09:00-18:00\" or \"22:00-06:00\" (wraps midnight), or empty for all day", s, why)
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return bad("missing '-' between start and end")
	}
	start, err := parseClock(strings.TrimSpace(a))
	if err != nil {
		return bad("start " + err.Error())
	}
	end, err := parseClock(strings.TrimSpace(b))
	if err != nil {
		return bad("end " + err.Error())
	}
	if start == 24*60 {
		return bad("start cannot be 24:00")
	}
	if start == end {
		return bad("start equals end, an empty window (use \"00:00-24:00\" or empty for all day)")
	}
	if start == 0 && end == 24*60 {
		return AllDay, nil
	}
	if end == 24*60 {
		end = 0 // 22:00-24:00 is the same window as 22:00-00:00
	}
	return ActiveHours{Start: start, End: end}, nil
}

// parseClock parses "HH:MM" or "H" into minutes of the day, allowing 24:00.
func parseClock(s string) (int, error) {
	hs, ms, hasMin := strings.Cut(s, ":")
	h, err := strconv.Atoi(hs)
	if err != nil || hs == "" || len(hs) > 2 || strings.ContainsAny(hs, "+-") {
		return 0, fmt.Errorf("%q is not a time of day", s)
	}
	m := 0
	if hasMin {
		if len(ms) != 2 {
			return 0, fmt.Errorf("%q: minutes must have two digits", s)
		}
		if m, err = strconv.Atoi(ms); err != nil || strings.ContainsAny(ms, "+-") || m > 59 {
			return 0, fmt.Errorf("%q: minutes must be 00-59", s)
		}
	}
	if h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("%q: hour must be 00-23 (or 24:00 as an end)", s)
	}
	return h*60 + m, nil
}

// String formats the window as "HH:MM-HH:MM" ("" for AllDay).
func (w ActiveHours) String() string {
	if w.all {
		return ""
	}
	end := w.End
	if end == 0 {
		end = 24 * 60
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, end/60, end%60)
}

// Contains reports whether t, read in loc, falls in the window. The start
// is inclusive, the end exclusive.
func (w ActiveHours) Contains(t time.Time, loc *time.Location) bool {
	if w.all {
		return true
	}
	if loc != nil {
		t = t.In(loc)
	}
	m := t.Hour()*60 + t.Minute()
	if w.Start < w.End {
		return w.Start <= m && m < w.End
	}
	return m >= w.Start || m < w.End // wraps midnight (End 0 means midnight)
}

// PulseLocation returns the time zone of cfg's active hours: its TimeZone,
// or hubLoc when empty. It returns EINVALID for an unknown zone.
func PulseLocation(cfg PulseConfig, hubLoc *time.Location) (*time.Location, error) {
	if cfg.TimeZone == "" {
		if hubLoc == nil {
			return time.Local, nil
		}
		return hubLoc, nil
	}
	loc, err := time.LoadLocation(cfg.TimeZone)
	if err != nil {
		return nil, Errorf(EINVALID, "time zone %q is unknown: expected an IANA name such as \"Europe/Paris\" or \"UTC\"", cfg.TimeZone)
	}
	return loc, nil
}

// Validate checks cfg and returns EINVALID with a message naming the field
// at fault. Instructions may be empty (ShouldPulse then reports why nothing
// runs) so that an agent can be configured before its instructions exist.
func (cfg PulseConfig) Validate() error {
	if cfg.Interval < MinPulseInterval || cfg.Interval > MaxPulseInterval {
		return Errorf(EINVALID, "pulse interval %s is out of range: give %s to %s", cfg.Interval, MinPulseInterval, MaxPulseInterval)
	}
	if _, err := ParseActiveHours(cfg.ActiveHours); err != nil {
		return err
	}
	if _, err := PulseLocation(cfg, time.UTC); err != nil {
		return err
	}
	if !utf8.ValidString(cfg.Instructions) {
		return Errorf(EINVALID, "pulse instructions are not valid UTF-8")
	}
	if cfg.OutputChannel != "" && !targetChannelRE().MatchString(cfg.OutputChannel) {
		return Errorf(EINVALID, "output channel %q: expected \"#name\" with name matching %s", cfg.OutputChannel, targetNamePattern)
	}
	return nil
}

// ShouldPulse reports whether a pulse may run for an agent at now, checking
// each precondition of seed 004 in order: enabled, instructions non-empty,
// interval elapsed, inside active hours (in loc unless cfg names a zone), no
// earlier pulse unanswered, agent not busy (no call since now-busyWindow).
// When it may not, reason is the key of the first precondition that fails;
// when it may, reason is PulseReady. A config that does not parse reports
// its error key as not ok rather than pulsing on a guess.
func ShouldPulse(cfg PulseConfig, state PulseState, lastCallAt, now time.Time, busyWindow time.Duration, loc *time.Location) (ok bool, reason string) {
	if !cfg.Enabled {
		return false, PulseDisabled
	}
	if strings.TrimSpace(cfg.Instructions) == "" {
		return false, PulseInstructionsEmpty
	}
	if !state.LastPulseAt.IsZero() && now.Sub(state.LastPulseAt) < cfg.Interval {
		return false, PulseIntervalNotElapsed
	}
	w, err := ParseActiveHours(cfg.ActiveHours)
	if err != nil {
		return false, PulseOutsideActiveHours
	}
	zone, err := PulseLocation(cfg, loc)
	if err != nil {
		return false, PulseOutsideActiveHours
	}
	if !w.Contains(now, zone) {
		return false, PulseOutsideActiveHours
	}
	if state.Unanswered {
		return false, PulseUnanswered
	}
	if busyWindow > 0 && !lastCallAt.IsZero() && now.Sub(lastCallAt) < busyWindow {
		return false, PulseAgentBusy
	}
	return true, PulseReady
}

// NextPulseAt returns the earliest time the interval allows the next pulse
// (other preconditions may still hold it back); zero when none was sent.
func NextPulseAt(cfg PulseConfig, state PulseState) time.Time {
	if state.LastPulseAt.IsZero() {
		return time.Time{}
	}
	return state.LastPulseAt.Add(cfg.Interval)
}

// PulseMeaningfulText returns the part of a pulse reply worth posting: the
// text trimmed, with a leading or trailing HEARTBEAT_OK token removed (agents
// often write "HEARTBEAT_OK" plus a sign-off, or end a report with it).
func PulseMeaningfulText(text string) string {
	t := strings.TrimSpace(text)
	for _, trim := range []func(string, string) (string, bool){strings.CutPrefix, strings.CutSuffix} {
		if rest, ok := trim(t, HeartbeatOK); ok {
			t = strings.TrimSpace(strings.Trim(strings.TrimSpace(rest), ".!:,-—"))
		}
	}
	return t
}

// PulseResponseOutcome decides what happens to an agent's reply to a pulse:
// PulseOutcomeOK when it says nothing beyond HEARTBEAT_OK (suppressed),
// PulseOutcomeDuplicate when its meaningful text equals lastOutput, the
// previous output posted (suppressed), else PulseOutcomePosted.
func PulseResponseOutcome(text, lastOutput string) string {
	m := PulseMeaningfulText(text)
	switch {
	case m == "":
		return PulseOutcomeOK
	case m == strings.TrimSpace(lastOutput):
		return PulseOutcomeDuplicate
	default:
		return PulseOutcomePosted
	}
}

// NextStart returns the first instant at or after t, read in loc, when the
// window opens; t itself when the window is AllDay or already open.
func (w ActiveHours) NextStart(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.Local
	}
	if w.Contains(t, loc) {
		return t
	}
	lt := t.In(loc)
	start := time.Date(lt.Year(), lt.Month(), lt.Day(), w.Start/60, w.Start%60, 0, 0, loc)
	if !start.After(t) {
		start = time.Date(lt.Year(), lt.Month(), lt.Day()+1, w.Start/60, w.Start%60, 0, 0, loc)
	}
	return start
}
