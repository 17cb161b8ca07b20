package hub

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Heartbeat pulses (seed 004, the claw0/OpenClaw heartbeat lane): an agent
// opts in to be woken on a schedule with a standing instruction, like
// HEARTBEAT.md. The orchestrator checks ShouldPulse each tick; the agent
// answers with RespondToPulse and PulseResponseOutcome decides what is shown.

// Pulse defaults and limits.
const (
	DefaultPulseInterval   = 30 * time.Minute
	DefaultPulseBusyWindow = 60 * time.Second
	MinPulseInterval       = time.Second
	MaxPulseInstructions   = 64 << 10 // bytes
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
	PulseUnanswered         = "unanswered"           // the previous pulse awaits RespondToPulse
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
	Unanswered    bool      // the last pulse awaits RespondToPulse
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
	if cfg.Interval < MinPulseInterval {
		return Errorf(EINVALID, "pulse interval %s is too short: at least %s", cfg.Interval, MinPulseInterval)
	}
	if _, err := ParseActiveHours(cfg.ActiveHours); err != nil {
		return err
	}
	if _, err := PulseLocation(cfg, time.UTC); err != nil {
		return err
	}
	if len(cfg.Instructions) > MaxPulseInstructions {
		return Errorf(EINVALID, "pulse instructions are %d bytes: at most %d", len(cfg.Instructions), MaxPulseInstructions)
	}
	if !utf8.ValidString(cfg.Instructions) {
		return Errorf(EINVALID, "pulse instructions are not valid UTF-8")
	}
	if cfg.OutputChannel != "" && !targetChannelRE.MatchString(cfg.OutputChannel) {
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

// nextPulseCheck returns when a pulse blocked for reason should be checked
// again; zero when only a config change can unblock it.
func nextPulseCheck(reason string, cfg PulseConfig, st PulseState, lastCall, now time.Time, busy time.Duration, loc *time.Location) time.Time {
	switch reason {
	case PulseIntervalNotElapsed:
		return NextPulseAt(cfg, st)
	case PulseOutsideActiveHours:
		w, err := ParseActiveHours(cfg.ActiveHours)
		zone, zerr := PulseLocation(cfg, loc)
		if err != nil || zerr != nil {
			return time.Time{}
		}
		return w.NextStart(now, zone)
	case PulseUnanswered:
		return now.Add(cfg.Interval) // RespondToPulse reschedules sooner
	case PulseAgentBusy:
		return later(lastCall.Add(busy), now.Add(time.Second))
	case PulseReady:
		return now
	}
	return time.Time{} // disabled, no instructions: a config change reschedules
}

// PulseStatus is a pulse with what would happen at a given time.
type PulseStatus struct {
	Pulse
	Reason    string    // ShouldPulse's reason: PulseReady or why not
	NextDueAt time.Time // when the interval next allows a pulse (zero: now)
}

// pulseStatus evaluates p at now.
func (s *Service) pulseStatus(p *Pulse, busy time.Duration, now time.Time) PulseStatus {
	_, reason := ShouldPulse(p.Config, p.State, s.lastCallForBusy(p.Config.AgentID), now, busy, s.cfg.Location)
	return PulseStatus{Pulse: *p, Reason: reason, NextDueAt: NextPulseAt(p.Config, p.State)}
}

// SetPulseConfig sets the pulse schedule of the agent named agentName,
// keeping its pulse state. An Interval of 0 means DefaultPulseInterval.
// Errors: EINVALID, ENOTFOUND.
func (s *Service) SetPulseConfig(ctx context.Context, agentName string, cfg PulseConfig) (*PulseStatus, error) {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultPulseInterval
	}
	cfg.ActiveHours = strings.TrimSpace(cfg.ActiveHours)
	cfg.TimeZone = strings.TrimSpace(cfg.TimeZone)
	cfg.OutputChannel = strings.TrimSpace(cfg.OutputChannel)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Instructions) > s.cfg.MaxBodyBytes-1024 {
		return nil, Errorf(EINVALID, "pulse instructions are %d bytes: at most %d (the message limit less room for the pulse header)", len(cfg.Instructions), s.cfg.MaxBodyBytes-1024)
	}
	now := s.clock.Now()
	cfg.UpdatedAt = now
	var st PulseStatus
	err := s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByName(agentName)
		if err != nil {
			return err
		}
		cfg.AgentID = a.ID
		next := time.Time{}
		if cfg.Enabled {
			next = now // the next tick decides
		}
		if err := tx.PutPulseConfig(cfg, next); err != nil {
			return err
		}
		p, err := tx.Pulse(a.ID)
		if err != nil {
			return err
		}
		st = s.pulseStatus(p, pulseBusyWindow(tx), now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// ListPulses returns every configured pulse with the reason it would or
// would not fire now.
func (s *Service) ListPulses(ctx context.Context) ([]PulseStatus, error) {
	now := s.clock.Now()
	var out []PulseStatus
	err := s.store.View(ctx, func(tx Tx) error {
		ps, err := tx.ListPulses()
		if err != nil {
			return err
		}
		busy := pulseBusyWindow(tx)
		for _, p := range ps {
			out = append(out, s.pulseStatus(p, busy, now))
		}
		return nil
	})
	return out, err
}

// pulseBody is the text of a pulse message.
func pulseBody(instructions, heartbeatID, channel string, loc Locale) string {
	if loc == LocaleJA {
		return "[ハートビート・パルス " + heartbeatID + "]\n\n" + strings.TrimSpace(instructions) +
			"\n\n— respond_to_pulse で返答してください: 報告事項がなければ " + HeartbeatOK + "、それ以外は " + channel + " に投稿されます。"
	}
	return "[heartbeat pulse " + heartbeatID + "]\n\n" + strings.TrimSpace(instructions) +
		"\n\n— Answer with respond_to_pulse: " + HeartbeatOK + " if there is nothing to report; anything else is posted to " + channel + "."
}

// deliverPulse sends the pulse p to agent a at now inside tx: a new current
// heartbeat ID, a heartbeat message with the instructions, and the state
// marked unanswered. It returns the message.
func (s *Service) deliverPulse(ctx context.Context, tx Tx, a *Agent, p *Pulse, now time.Time) (*Message, error) {
	hbID := FormatHeartbeatID(now, s.cfg.Location)
	a.CurrentHeartbeatID, a.HeartbeatStartedAt = hbID, now.Truncate(time.Second)
	if err := tx.UpdateAgent(a); err != nil {
		return nil, err
	}
	for _, f := range s.hooks.Heartbeat {
		if err := f(ctx, tx, a, now); err != nil {
			return nil, err
		}
	}
	channel := p.Config.OutputChannel
	if channel == "" {
		channel = DefaultPulseChannel(a.Name)
	}
	req := PostRequest{To: []string{a.Name}, Body: pulseBody(p.Config.Instructions, hbID, channel, s.locale(a)), Kind: KindHeartbeat}
	if err := s.validatePost(&req); err != nil {
		return nil, err
	}
	m := &Message{From: SenderOrchestrator, Body: req.Body, Kind: req.Kind, CreatedAt: now}
	if _, err := s.route(tx, nil, m, req, now); err != nil {
		return nil, err
	}
	st := p.State
	st.AgentID = a.ID
	st.LastPulseAt, st.Unanswered, st.PulseCount = now, true, st.PulseCount+1
	st.LastReason, st.LastCheckedAt = PulseReady, now
	if err := tx.PutPulseState(st, now.Add(p.Config.Interval)); err != nil {
		return nil, err
	}
	if err := s.RecordEvent(tx, a.ID, EventPulse, "heartbeat pulse "+hbID+" delivered", now); err != nil {
		return nil, err
	}
	return m, nil
}

// TriggerPulse sends a pulse to the agent named agentName now, whatever the
// interval, active hours, pending answer or busy state. Errors: ENOTFOUND,
// EPRECONDITION (disabled agent, no pulse configured, empty instructions).
func (s *Service) TriggerPulse(ctx context.Context, agentName string) (*Message, string, error) {
	now := s.clock.Now()
	var m *Message
	var hbID string
	var agentID int64
	err := s.store.Update(ctx, func(tx Tx) error {
		a, err := tx.AgentByName(agentName)
		if err != nil {
			return err
		}
		if a.Disabled() {
			return Errorf(EPRECONDITION, "agent %q is disabled: enable it with `hubctl agent enable %s` first", a.Name, a.Name)
		}
		p, err := tx.Pulse(a.ID)
		if ErrorCode(err) == ENOTFOUND {
			return Errorf(EPRECONDITION, "agent %q has no pulse configured: set one with `hubctl pulse set %s --instructions TEXT`", a.Name, a.Name)
		} else if err != nil {
			return err
		}
		if strings.TrimSpace(p.Config.Instructions) == "" {
			return Errorf(EPRECONDITION, "agent %q has empty pulse instructions: nothing to send (set them with `hubctl pulse set %s --instructions TEXT`)", a.Name, a.Name)
		}
		if m, err = s.deliverPulse(ctx, tx, a, p, now); err != nil {
			return err
		}
		hbID, agentID = a.CurrentHeartbeatID, a.ID
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	s.waiters.Notify(agentID)
	return m, hbID, nil
}

// RunPulses checks the pulses due at now (up to limit) and delivers those
// whose preconditions all hold; the others record why not and when to look
// again. It returns how many pulses were sent.
func (s *Service) RunPulses(ctx context.Context, now time.Time, limit int) (int, error) {
	var ids []int64
	var busy time.Duration
	err := s.store.View(ctx, func(tx Tx) (err error) {
		busy = pulseBusyWindow(tx)
		ids, err = tx.DuePulses(now, limit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	wake, err := s.updateEach(ctx, ids, func(tx Tx, id int64) ([]int64, error) {
		p, err := tx.Pulse(id)
		if err != nil {
			return nil, err
		}
		a, err := tx.AgentByID(id)
		if err != nil {
			return nil, err
		}
		st := p.State
		st.AgentID, st.LastCheckedAt = id, now
		if a.Disabled() {
			st.LastReason = PulseDisabled
			return nil, tx.PutPulseState(st, now.Add(time.Hour))
		}
		lastCall := s.lastCallForBusy(id)
		ok, reason := ShouldPulse(p.Config, p.State, lastCall, now, busy, s.cfg.Location)
		if !ok {
			st.LastReason = reason
			return nil, tx.PutPulseState(st, nextPulseCheck(reason, p.Config, p.State, lastCall, now, busy, s.cfg.Location))
		}
		if _, err := s.deliverPulse(ctx, tx, a, p, now); err != nil {
			return nil, fmt.Errorf("pulse %s: %w", a.Name, err)
		}
		return []int64{id}, nil
	})
	s.waiters.Notify(wake...)
	return len(wake), err
}

// PulseReply is the result of RespondToPulse.
type PulseReply struct {
	Outcome string   // PulseOutcome*
	Message *Message // the posted message when Outcome is PulseOutcomePosted
}

// RespondToPulse records the caller's answer to its last pulse: HEARTBEAT_OK
// and a repeat of its previous output are suppressed, anything else is
// posted from the caller to its output channel. Errors: EINVALID (text too
// long), EPRECONDITION (no pulse configured).
func (s *Service) RespondToPulse(ctx context.Context, caller *Agent, text string) (*PulseReply, error) {
	if len(text) > s.cfg.MaxBodyBytes {
		return nil, Errorf(EINVALID, "text is %d bytes; the limit is %d bytes", len(text), s.cfg.MaxBodyBytes)
	}
	if !utf8.ValidString(text) {
		return nil, Errorf(EINVALID, "text must be valid UTF-8")
	}
	now := s.clock.Now()
	var r PulseReply
	var wake []int64
	err := s.store.Update(ctx, func(tx Tx) error {
		p, err := tx.Pulse(caller.ID)
		if ErrorCode(err) == ENOTFOUND {
			return Errorf(EPRECONDITION, "no heartbeat pulse is configured for %q, so there is nothing to answer (an admin sets one with `hubctl pulse set %s`)", caller.Name, caller.Name)
		} else if err != nil {
			return err
		}
		st := p.State
		st.AgentID = caller.ID
		r.Outcome = PulseResponseOutcome(text, st.LastOutput)
		if r.Outcome == PulseOutcomePosted {
			channel := p.Config.OutputChannel
			if channel == "" {
				channel = DefaultPulseChannel(caller.Name)
			}
			out := PulseMeaningfulText(text)
			req := PostRequest{Channel: channel, Body: out, Kind: KindMessage}
			if err := s.validatePost(&req); err != nil {
				return err
			}
			m := &Message{From: caller.Name, Channel: channel, Body: out, Kind: req.Kind, CreatedAt: now}
			if wake, err = s.route(tx, caller, m, req, now); err != nil {
				return err
			}
			r.Message, st.LastOutput = m, out
		}
		st.Unanswered, st.LastOutcome, st.LastRespondAt = false, r.Outcome, now
		next := time.Time{}
		if p.Config.Enabled {
			next = later(NextPulseAt(p.Config, st), now)
		}
		return tx.PutPulseState(st, next)
	})
	if err != nil {
		return nil, err
	}
	s.waiters.Notify(wake...)
	return &r, nil
}
