// Package row reads the hub's rows the same way in both stores: their
// tables have the same columns (times as Unix nanoseconds, 0 for unset),
// so the column lists and the scanning into domain values are written
// once. Each store keeps its own queries. It also holds the rule both
// stores apply when loading a liveness state's declarations.
package row

import (
	"strings"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// Scanner is one row to scan (database/sql's and pgx's rows both are).
type Scanner interface{ Scan(dest ...any) error }

// Nanos returns t as a time column: Unix nanoseconds, 0 for the zero time.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Time returns a time column's value: the zero time for 0.
func Time(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// AgentColumns are the columns of agents that Agent scans.
const AgentColumns = `id, name, display_name, role, description, locale, created_at, disabled_at,
	current_heartbeat_id, heartbeat_started_at, read_up_to, last_seen_at, last_interaction_beat, project,
	session_ended_at, retired_at`

// AgentColumnsA is AgentColumns qualified with the table alias a.
var AgentColumnsA = func() string {
	cols := strings.Split(AgentColumns, ",")
	for i, c := range cols {
		cols[i] = "a." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// Agent scans AgentColumns, then the extra destinations.
func Agent(s Scanner, extra ...any) (*hub.Agent, error) {
	return NewAgentScan(extra...).Scan(s)
}

// AgentScan scans agent rows of a query, AgentColumns then extra
// destinations, into one set of destinations made once for the query
// rather than once per row (a due batch reads hundreds of agents).
type AgentScan struct {
	a                                      hub.Agent
	created, disabled, hbStarted, lastSeen int64
	ended, retired                         int64
	dest                                   []any
}

// NewAgentScan returns an AgentScan whose rows end with the extra
// destinations (scanned again at each row).
func NewAgentScan(extra ...any) *AgentScan {
	s := &AgentScan{}
	a := &s.a
	s.dest = append([]any{&a.ID, &a.Name, &a.DisplayName, &a.Role, &a.Description, &a.Locale, &s.created, &s.disabled,
		&a.CurrentHeartbeatID, &s.hbStarted, &a.ReadUpTo, &s.lastSeen, &a.LastInteractionBeat, &a.Project,
		&s.ended, &s.retired}, extra...)
	return s
}

// Scan scans the current row of r and returns its agent (a new value each
// time).
func (s *AgentScan) Scan(r Scanner) (*hub.Agent, error) {
	if err := r.Scan(s.dest...); err != nil {
		return nil, err
	}
	a := s.a
	a.CreatedAt, a.DisabledAt = Time(s.created), Time(s.disabled)
	a.HeartbeatStartedAt, a.LastSeenAt = Time(s.hbStarted), Time(s.lastSeen)
	a.SessionEndedAt, a.RetiredAt = Time(s.ended), Time(s.retired)
	return &a, nil
}

// DeepWorkColumns are the columns of deep_work d joined with agents a that
// DeepWork scans.
const DeepWorkColumns = `d.id, d.agent_id, a.name, d.mode, d.planned_activity, d.heartbeat_id, d.started_at, d.ends_at,
	d.state, d.ended_at, d.end_reason`

// DeepWork scans DeepWorkColumns.
func DeepWork(s Scanner) (*hub.DeepWork, error) {
	var d hub.DeepWork
	var mode, state, reason string
	var started, ends, ended int64
	if err := s.Scan(&d.ID, &d.AgentID, &d.AgentName, &mode, &d.PlannedActivity, &d.HeartbeatID, &started, &ends,
		&state, &ended, &reason); err != nil {
		return nil, err
	}
	d.Mode, d.State, d.EndReason = hub.DeepWorkMode(mode), hub.DeepWorkState(state), hub.DeepWorkEnd(reason)
	d.StartedAt, d.EndsAt, d.EndedAt = Time(started), Time(ends), Time(ended)
	return &d, nil
}

// PulseColumns are the columns of pulses p joined with agents a that Pulse
// scans.
const PulseColumns = `p.agent_id, a.name, p.enabled, p.interval_ns, p.active_hours, p.time_zone, p.instructions, p.output_channel, p.updated_at,
	p.last_pulse_at, p.unanswered, p.last_output, p.last_outcome, p.last_respond_at, p.pulse_count, p.last_reason, p.last_checked_at, p.next_check_at`

// Pulse scans PulseColumns.
func Pulse(s Scanner) (*hub.Pulse, error) {
	var p hub.Pulse
	var interval, updated, lastPulse, lastRespond, lastChecked, next int64
	c, st := &p.Config, &p.State
	err := s.Scan(&c.AgentID, &p.AgentName, &c.Enabled, &interval, &c.ActiveHours, &c.TimeZone, &c.Instructions, &c.OutputChannel, &updated,
		&lastPulse, &st.Unanswered, &st.LastOutput, &st.LastOutcome, &lastRespond, &st.PulseCount, &st.LastReason, &lastChecked, &next)
	if err != nil {
		return nil, err
	}
	st.AgentID = c.AgentID
	c.Interval, c.UpdatedAt = time.Duration(interval), Time(updated)
	st.LastPulseAt, st.LastRespondAt, st.LastCheckedAt = Time(lastPulse), Time(lastRespond), Time(lastChecked)
	p.NextCheckAt = Time(next)
	return &p, nil
}

// CronJobColumns are the columns of cron_jobs that CronJob scans.
const CronJobColumns = `id, name, kind, at, every_seconds, anchor, expr, target, message, enabled, consecutive_errors,
	next_run_at, last_run_at, created_at, updated_at, project`

// CronJob scans CronJobColumns.
func CronJob(s Scanner) (*hub.CronJob, error) {
	var j hub.CronJob
	var at, anchor, next, last, created, updated int64
	err := s.Scan(&j.ID, &j.Name, &j.Kind, &at, &j.EverySeconds, &anchor, &j.Expr, &j.Target, &j.Message, &j.Enabled,
		&j.ConsecutiveErrors, &next, &last, &created, &updated, &j.Project)
	if err != nil {
		return nil, err
	}
	j.At, j.Anchor, j.NextRunAt, j.LastRunAt = Time(at), Time(anchor), Time(next), Time(last)
	j.CreatedAt, j.UpdatedAt = Time(created), Time(updated)
	return &j, nil
}

// Declared is a liveness state being loaded, with the IDs of the
// declarations its row names.
type Declared struct {
	State               *hub.LivenessState
	ActiveID, ExpiredID int64
	// Stale is set by Attach when the row names as active a declaration
	// that is no longer active (closed by hand).
	Stale bool
}

// DeclarationIDs returns the IDs of the declarations the states name.
func DeclarationIDs(ds []*Declared) []int64 {
	var ids []int64
	for _, d := range ds {
		for _, id := range []int64{d.ActiveID, d.ExpiredID} {
			if id != 0 {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// Attach sets each state's declarations from dws (every ID of
// DeclarationIDs, read by ID). A declaration closed by hand is never
// loaded as active again: its state is marked Stale instead.
func Attach(ds []*Declared, dws map[int64]*hub.DeepWork) {
	for _, d := range ds {
		if id := d.ActiveID; id != 0 {
			if dw := dws[id]; dw.IsActive() {
				d.State.ActiveDeepWork = dw
			} else {
				d.Stale = true
			}
		}
		if id := d.ExpiredID; id != 0 {
			d.State.ExpiredDeepWork = dws[id]
		}
	}
}

// FillNudgeStates sets, for each due nudge check of byID, its agent's
// state among ds, or for an agent without a stored state the state
// LivenessState gives such an agent.
func FillNudgeStates(byID map[int64]*hub.DueNudge, ds []*Declared) {
	for _, d := range ds {
		if n := byID[d.State.AgentID]; n != nil {
			n.State = d.State
		}
	}
	for _, n := range byID {
		if n.State == nil {
			st := hub.NewLivenessState(n.Agent.ID, n.Agent.CreatedAt)
			n.State = &st
		}
	}
}

// ReservationColumnsA are the columns Reservation scans, from reservations
// r joined with agents a.
const ReservationColumnsA = `r.id, r.agent_id, a.name, r.pattern, r.mode, r.reason, r.created_at, r.expires_at, a.project`

// Reservation scans ReservationColumnsA.
func Reservation(s Scanner) (*hub.Reservation, error) {
	var r hub.Reservation
	var mode string
	var created, expires int64
	if err := s.Scan(&r.ID, &r.AgentID, &r.AgentName, &r.Pattern, &mode, &r.Reason, &created, &expires, &r.Project); err != nil {
		return nil, err
	}
	r.Mode, r.CreatedAt, r.ExpiresAt = hub.ReservationMode(mode), Time(created), Time(expires)
	return &r, nil
}

// JoinCodeColumns are the columns of join_codes that JoinCode scans.
const JoinCodeColumns = `id, role, note, max_uses, uses, created_at, expires_at, revoked_at, project`

// JoinCode scans JoinCodeColumns.
func JoinCode(s Scanner) (*hub.JoinCode, error) {
	var c hub.JoinCode
	var created, expires, revoked int64
	if err := s.Scan(&c.ID, &c.Role, &c.Note, &c.MaxUses, &c.Uses, &created, &expires, &revoked, &c.Project); err != nil {
		return nil, err
	}
	c.CreatedAt, c.ExpiresAt, c.RevokedAt = Time(created), Time(expires), Time(revoked)
	return &c, nil
}

// NormalPriority gives m the normal priority when it has none, and the
// agent's sender kind when it has none (a message never passes for a
// person's unless it says so), before a store writes it.
func NormalPriority(m *hub.Message) {
	if m.Priority == 0 {
		m.Priority = hub.PriorityNormal
	}
	if m.SenderKind == "" {
		m.SenderKind = hub.ByAgent
	}
}

// Receipt scans a receipt: agent ID, agent name, mention, delivered at,
// read (the cursor passed it), read at, acknowledged at, in context at,
// via.
func Receipt(s Scanner) (hub.Receipt, error) {
	var r hub.Receipt
	var delivered, readAt, acked, inContext int64
	var via int16
	if err := s.Scan(&r.AgentID, &r.Agent, &r.Mention, &delivered, &r.Read, &readAt, &acked, &inContext, &via); err != nil {
		return r, err
	}
	r.DeliveredAt, r.ReadAt, r.AckedAt, r.InContextAt = Time(delivered), Time(readAt), Time(acked), Time(inContext)
	r.Via = hub.Via(via)
	return r, nil
}

// PathRow scans a path row: agent ID, via, last seen at, live until,
// replica, written at.
func PathRow(s Scanner) (hub.PathRow, error) {
	var r hub.PathRow
	var via int16
	var seen, until, written int64
	if err := s.Scan(&r.AgentID, &via, &seen, &until, &r.Replica, &written); err != nil {
		return r, err
	}
	r.Via, r.LastSeenAt, r.LiveUntil, r.WrittenAt = hub.Via(via), Time(seen), Time(until), Time(written)
	return r, nil
}

// HeldMessage scans a held delivery: agent ID, agent name, agent locale,
// message ID, sender, channel, body, taken.
func HeldMessage(s Scanner) (hub.HeldMessage, error) {
	var h hub.HeldMessage
	err := s.Scan(&h.AgentID, &h.Agent, &h.Locale, &h.MessageID, &h.From, &h.SenderKind, &h.Channel, &h.Body, &h.Taken)
	return h, err
}

// PendingAck scans a pending acknowledgement: agent ID, agent name, agent
// locale, message ID, sender, message creation time.
func PendingAck(s Scanner) (hub.PendingAck, error) {
	var p hub.PendingAck
	var created int64
	if err := s.Scan(&p.AgentID, &p.Agent, &p.Locale, &p.MessageID, &p.From, &created); err != nil {
		return p, err
	}
	p.CreatedAt = Time(created)
	return p, nil
}

// History is a table of an agent's rows that grows with its history, with
// the column that orders them.
type History struct{ Table, Key string }

// AgentHistory are the tables a deletion of an agent empties of its rows
// in batches (hub.AgentDeleteTx.DeleteAgentRows), before the agent's own
// row takes what is left by cascade.
var AgentHistory = []History{
	{"activity_logs", "id"},
	{"checkpoints", "id"},
	{"events", "id"},
	{"read_marks", "up_to"},
	{"usage_minutes", "at"},
}

// DeleteBatch is the statement that deletes the first (by Key) of an
// agent's rows in h, as many as a limit; agent and limit are the store's
// placeholders of the two.
func (h History) DeleteBatch(agent, limit string) string {
	return `DELETE FROM ` + h.Table + ` WHERE agent_id = ` + agent + ` AND ` + h.Key + ` <= (
		SELECT MAX(` + h.Key + `) FROM (SELECT ` + h.Key + ` FROM ` + h.Table + ` WHERE agent_id = ` + agent + ` ORDER BY ` + h.Key + ` LIMIT ` + limit + `) s)`
}
