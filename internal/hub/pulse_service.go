package hub

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// PulseTx stores heartbeat pulse configs and their state.
type PulseTx interface {
	// PutPulseConfig stores an agent's pulse config, keeping its state, and
	// sets its next check to nextCheckAt.
	PutPulseConfig(cfg PulseConfig, nextCheckAt time.Time) error
	// Pulse returns an agent's pulse config and state. ENOTFOUND when the
	// agent has none.
	Pulse(agentID int64) (*Pulse, error)
	// Pulses returns every pulse config with its state, by agent name.
	Pulses() ([]*Pulse, error)
	// DuePulses returns up to limit agent IDs of enabled pulses whose next
	// check is due at now.
	DuePulses(now time.Time, limit int) ([]int64, error)
	// PutPulseState stores an agent's pulse state and next check. ENOTFOUND
	// when the agent has no pulse config.
	PutPulseState(st PulseState, nextCheckAt time.Time) error
	// RecordPulse records that the agent's nth pulse is sent at at, and
	// reports false, writing nothing, when it already was (by another
	// orchestrator, after a fail-over).
	RecordPulse(agentID, n int64, at time.Time) (bool, error)
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
func (s *Schedule) pulseStatus(p *Pulse, busy time.Duration, now time.Time) PulseStatus {
	_, reason := ShouldPulse(p.Config, p.State, s.lastCallForBusy(p.Config.AgentID), now, busy, s.cfg.Location)
	return PulseStatus{Pulse: *p, Reason: reason, NextDueAt: NextPulseAt(p.Config, p.State)}
}

// SetPulseConfig sets the pulse schedule of the agent named agentName,
// keeping its pulse state. An Interval of 0 means DefaultPulseInterval.
// Errors: EINVALID, ENOTFOUND.
func (s *Schedule) SetPulseConfig(ctx context.Context, agentName string, cfg PulseConfig) (*PulseStatus, error) {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultPulseInterval
	}
	cfg.ActiveHours = strings.TrimSpace(cfg.ActiveHours)
	cfg.TimeZone = strings.TrimSpace(cfg.TimeZone)
	cfg.OutputChannel = strings.TrimSpace(cfg.OutputChannel)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkWrappedText("pulse instructions", len(cfg.Instructions), s.cfg.MaxBodyBytes); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	cfg.UpdatedAt = now
	var st PulseStatus
	err := update(ctx, s.store, func(tx scheduleTx) error {
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
func (s *Schedule) ListPulses(ctx context.Context) ([]PulseStatus, error) {
	now := s.clock.Now()
	var out []PulseStatus
	err := view(ctx, s.store, func(tx scheduleTx) error {
		ps, err := tx.Pulses()
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

// deliverPulseTx is what deliverPulse reads and writes.
type deliverPulseTx interface {
	routeTx // the pulse's post (Messages.Route)
	// AgentTx
	UpdateAgent(a *Agent) error
	// EventTx
	InsertEvent(e *Event) error
	// PulseTx
	PutPulseState(st PulseState, nextCheckAt time.Time) error
	RecordPulse(agentID, n int64, at time.Time) (bool, error)
}

// deliverPulse sends the pulse p to agent a at now inside tx: a new current
// heartbeat ID, a heartbeat message with the instructions, and the state
// marked unanswered. It returns the message, or nil when the store says
// this pulse was already sent (p is stale: another orchestrator sent it).
func (s *Schedule) deliverPulse(ctx context.Context, tx deliverPulseTx, a *Agent, p *Pulse, now time.Time) (*Message, error) {
	if fresh, err := tx.RecordPulse(a.ID, p.State.PulseCount+1, now); err != nil || !fresh {
		return nil, err
	}
	hbID := FormatHeartbeatID(now, s.cfg.Location)
	a.CurrentHeartbeatID, a.HeartbeatStartedAt = hbID, now.Truncate(time.Second)
	if err := tx.UpdateAgent(a); err != nil {
		return nil, err
	}
	channel := p.Config.OutputChannel
	if channel == "" {
		channel = DefaultPulseChannel(a.Name)
	}
	req := PostRequest{To: []string{a.Name}, Body: pulseBody(p.Config.Instructions, hbID, channel, s.locale(a)), Kind: KindHeartbeat}
	if err := s.messages.ValidatePost(&req); err != nil {
		return nil, err
	}
	m := &Message{Project: ProjectOr(a.Project), From: SenderOrchestrator, SenderKind: ByHub, Body: req.Body, Kind: req.Kind, CreatedAt: now, Priority: req.Priority}
	if err := s.messages.Route(tx, nil, m, req, now); err != nil {
		return nil, err
	}
	st := p.State
	st.AgentID = a.ID
	st.LastPulseAt, st.Unanswered, st.PulseCount = now, true, st.PulseCount+1
	st.LastReason, st.LastCheckedAt = PulseReady, now
	if err := tx.PutPulseState(st, now.Add(p.Config.Interval)); err != nil {
		return nil, err
	}
	if err := recordEvent(tx, a.ID, EventPulse, "heartbeat pulse "+hbID+" delivered", now); err != nil {
		return nil, err
	}
	return m, nil
}

// TriggerPulse sends a pulse to the agent named agentName now, whatever the
// interval, active hours, pending answer or busy state. Errors: ENOTFOUND,
// EPRECONDITION (disabled agent, no pulse configured, empty instructions).
func (s *Schedule) TriggerPulse(ctx context.Context, agentName string) (*Message, string, error) {
	now := s.clock.Now()
	var m *Message
	var hbID string
	err := update(ctx, s.store, func(tx scheduleTx) error {
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
		} else if m == nil {
			return Errorf(ECONFLICT, "a pulse to %q was sent meanwhile: check `hubctl pulse list` before triggering another", a.Name)
		}
		hbID = a.CurrentHeartbeatID
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return m, hbID, nil
}

// RunPulses checks the pulses due at now (up to limit) and delivers those
// whose preconditions all hold; the others record why not and when to look
// again. It returns how many pulses were sent.
func (s *Schedule) RunPulses(ctx context.Context, now time.Time, limit int) (int, error) {
	var ids []int64
	var busy time.Duration
	err := view(ctx, s.store, func(tx scheduleTx) (err error) {
		busy = pulseBusyWindow(tx)
		ids, err = tx.DuePulses(now, limit)
		return err
	})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	wake, err := updateEach(ctx, s.store, ids, func(tx scheduleTx, id int64) ([]int64, error) {
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
		m, err := s.deliverPulse(ctx, tx, a, p, now)
		if err != nil {
			return nil, fmt.Errorf("pulse %s: %w", a.Name, err)
		} else if m == nil {
			return nil, nil
		}
		return []int64{id}, nil
	})
	return len(wake), err
}

// PulseReply is the result of RespondToPulse.
type PulseReply struct {
	Outcome string   // PulseOutcome*
	Message *Message // the posted message when Outcome is PulseOutcomePosted
	Pending bool     // a pulse was waiting for this answer
}

// RespondToPulse records the caller's answer to its last pulse: HEARTBEAT_OK
// and a repeat of its previous output are suppressed, anything else is
// posted from the caller to its output channel. Errors: EINVALID (text too
// long), EPRECONDITION (no pulse configured).
func (s *Schedule) RespondToPulse(ctx context.Context, caller *Agent, text string) (*PulseReply, error) {
	if strings.TrimSpace(text) == "" {
		return nil, Errorf(EINVALID, "text is empty: answer HEARTBEAT_OK when there is nothing to report, else a short report")
	}
	if len(text) > s.cfg.MaxBodyBytes {
		return nil, Errorf(EINVALID, "text is %d bytes; the limit is %d bytes", len(text), s.cfg.MaxBodyBytes)
	}
	if !utf8.ValidString(text) {
		return nil, Errorf(EINVALID, "text must be valid UTF-8")
	}
	now := s.clock.Now()
	var r PulseReply
	err := update(ctx, s.store, func(tx scheduleTx) error {
		p, err := tx.Pulse(caller.ID)
		if ErrorCode(err) == ENOTFOUND {
			return Errorf(EPRECONDITION, "no heartbeat pulse is configured for %q, so there is nothing to answer: carry on with your work", caller.Name)
		} else if err != nil {
			return err
		}
		st := p.State
		st.AgentID = caller.ID
		r.Pending = st.Unanswered
		r.Outcome = PulseResponseOutcome(text, st.LastOutput)
		if r.Outcome == PulseOutcomePosted {
			channel := p.Config.OutputChannel
			if channel == "" {
				channel = DefaultPulseChannel(caller.Name)
			}
			out := PulseMeaningfulText(text)
			req := PostRequest{Channel: channel, Body: out, Kind: KindMessage}
			if err := s.messages.ValidatePost(&req); err != nil {
				return err
			}
			m := &Message{Project: ProjectOr(caller.Project), From: caller.Name, SenderKind: ByAgent, Channel: channel, Body: out, Kind: req.Kind, CreatedAt: now, Priority: req.Priority}
			if err := s.messages.Route(tx, caller, m, req, now); err != nil {
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
	return &r, nil
}

// lastCallForBusy returns when the agent last made a call, for the "busy"
// precondition of pulses: zero while it is parked in WaitForMessages, as an
// agent waiting for messages is not busy with its own work.
func (s *Schedule) lastCallForBusy(agentID int64) time.Time {
	if s.waiters.AgentCount(agentID) > 0 {
		return time.Time{}
	}
	t, _ := s.presence.LastCall(agentID)
	return t
}

// Pulse is an agent's pulse config with its state.
type Pulse struct {
	AgentName   string
	Config      PulseConfig
	State       PulseState
	NextCheckAt time.Time
}
