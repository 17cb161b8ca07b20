package hub

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Priorities and receipts. A message carries a priority and may ask each
// recipient for an acknowledgement. Per recipient the hub keeps four
// receipts:
//
//   - delivered: the first time the message left the hub for that
//     recipient, in the reply of a list or a wait (the agent's own, or a
//     path's: hub mcp's channel push, the tmux sidecar) or in a hook's
//     injection. Written once per delivery.
//   - in context: the first time the message reached the recipient's
//     context, and through which path (Via): the reply of its own wait or
//     read, or a host hook's injection, a channel notification or a tmux
//     paste that the path confirmed (Receipts.Confirm) once the host took
//     it. Written once per delivery: the first path wins.
//   - read: the recipient's read cursor passed the message. It is
//     derived from the cursor, never written per message: each move of the
//     cursor records one (agent, up to, time) mark, and a message's read
//     time is that of the first mark at or above it.
//   - acknowledged: the recipient acknowledged it (Receipts.Acknowledge).
//
// Within one reply of a wait or a list, urgent messages come first, then
// high, normal and low; the cursor is still the newest ID the reply covers,
// so the order within a reply never makes a client skip a message.

// Priority is how urgent a message is. The zero value is "not given", which
// means PriorityNormal.
type Priority int

// Priorities, from the least urgent.
const (
	PriorityLow Priority = iota + 1
	PriorityNormal
	PriorityHigh
	PriorityUrgent
)

// priorityNames are the priorities' names, by value.
var priorityNames = []string{PriorityLow: "low", PriorityNormal: "normal", PriorityHigh: "high", PriorityUrgent: "urgent"}

// String returns the priority's name ("normal" for the zero value).
func (p Priority) String() string {
	if p == 0 {
		return "normal"
	}
	if p < PriorityLow || p > PriorityUrgent {
		return "priority(" + strconv.Itoa(int(p)) + ")"
	}
	return priorityNames[p]
}

// CheckPriority returns p with the zero value made PriorityNormal, or
// EINVALID naming the allowed values.
func CheckPriority(p Priority) (Priority, error) {
	switch {
	case p == 0:
		return PriorityNormal, nil
	case p >= PriorityLow && p <= PriorityUrgent:
		return p, nil
	}
	return 0, Errorf(EINVALID, "priority %d is not one of low, normal, high, urgent", int(p))
}

// ParsePriority returns the priority named s ("" is normal), or EINVALID
// naming the allowed values.
func ParsePriority(s string) (Priority, error) {
	if s == "" {
		return PriorityNormal, nil
	}
	for p := PriorityLow; p <= PriorityUrgent; p++ {
		if strings.EqualFold(s, priorityNames[p]) {
			return p, nil
		}
	}
	return 0, Errorf(EINVALID, "priority %q is not one of low, normal, high, urgent", s)
}

// SortByPriority orders the messages of one reply most urgent first, by ID
// within a priority. The caller keeps the cursor it computed before.
func SortByPriority(msgs []*Message) {
	slices.SortStableFunc(msgs, func(a, b *Message) int { return int(b.Priority) - int(a.Priority) })
}

// Receipt is what happened to one message for one recipient.
type Receipt struct {
	AgentID     int64
	Agent       string
	Mention     bool      // the message mentioned the recipient
	DeliveredAt time.Time // zero: not yet delivered
	InContextAt time.Time // zero: not yet in the recipient's context
	Via         Via       // the path that put it there first
	Read        bool      // the recipient's read cursor passed it
	ReadAt      time.Time // when; zero when read before receipts were kept
	AckedAt     time.Time // zero: not acknowledged
}

// ReceiptState is where a message is for one recipient: the most advanced
// state it reached.
type ReceiptState string

// The receipt states, from the least advanced.
const (
	StateQueued       ReceiptState = "QUEUED"       // stored, not yet in the recipient's context
	StateInContext    ReceiptState = "IN_CONTEXT"   // in the recipient's context (Via says how)
	StateRead         ReceiptState = "READ"         // the recipient's read cursor passed it
	StateAcknowledged ReceiptState = "ACKNOWLEDGED" // the recipient acknowledged it
)

// State returns the most advanced state r reached.
func (r Receipt) State() ReceiptState {
	switch {
	case !r.AckedAt.IsZero():
		return StateAcknowledged
	case r.Read:
		return StateRead
	case !r.InContextAt.IsZero():
		return StateInContext
	}
	return StateQueued
}

// Via is the path a message took into an agent's context, and the kind of
// a path the hub can reach an agent by (reachability.go).
type Via uint8

// The paths. Wait and Read are the agent's own calls, recorded by the hub
// as it answers them; Hook, Channel and Tmux carry messages outside them
// and confirm what the host took (Receipts.Confirm).
const (
	ViaWait    Via = iota + 1 // the reply of its own WaitForMessages
	ViaRead                   // the reply of its own ListMessages
	ViaHook                   // a host hook's injection (hub hook)
	ViaChannel                // a Claude Code channel notification (hub mcp)
	ViaTmux                   // typed into its tmux pane (hub deliver)
)

// viaNames are the paths' names, by value.
var viaNames = [...]string{ViaWait: "wait", ViaRead: "read", ViaHook: "hook", ViaChannel: "channel", ViaTmux: "tmux"}

// String returns the path's name ("" for none).
func (v Via) String() string {
	if int(v) < len(viaNames) {
		return viaNames[v]
	}
	return "via(" + strconv.Itoa(int(v)) + ")"
}

// Confirmed reports whether the path confirms what the host took
// (Receipts.Confirm) rather than being recorded as the hub answers.
func (v Via) Confirmed() bool { return v == ViaHook || v == ViaChannel || v == ViaTmux }

// ParseVia returns the path named s ("" is none) among allowed, or
// EINVALID naming the field and the allowed values.
func ParseVia(field, s string, allowed ...Via) (Via, error) {
	if s == "" {
		return 0, nil
	}
	names := make([]string, len(allowed))
	for i, v := range allowed {
		if strings.EqualFold(s, v.String()) {
			return v, nil
		}
		names[i] = v.String()
	}
	return 0, Errorf(EINVALID, "%s %q is not one of %s", field, s, strings.Join(names, ", "))
}

// MaxConfirmIDs is how many messages one confirmation may name.
const MaxConfirmIDs = 200

// Ack is one acknowledged message.
type Ack struct {
	MessageID int64
	AckedAt   time.Time // when it was first acknowledged
	First     bool      // this call acknowledged it
}

// MaxAckIDs is how many messages one acknowledgement may name.
const MaxAckIDs = 100

// PendingAck is one delivery that asked for an acknowledgement, got none
// and was not yet nudged about (ReceiptTx.OverdueAcks).
type PendingAck struct {
	AgentID   int64
	Agent     string
	Locale    string // the agent's own locale, "" for the hub's
	MessageID int64
	From      string
	CreatedAt time.Time
}

// groupPendingAcks groups ps by agent, in order of first appearance.
func groupPendingAcks(ps []PendingAck) [][]PendingAck {
	var out [][]PendingAck
	at := map[int64]int{}
	for _, p := range ps {
		i, ok := at[p.AgentID]
		if !ok {
			i = len(out)
			at[p.AgentID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}

// ackOverdueText writes the nudge about one agent's overdue
// acknowledgements ps (all of that agent): it mentions the agent, names the
// messages and says what to call.
func ackOverdueText(ps []PendingAck, l Locale, now time.Time) string {
	refs := make([]string, len(ps))
	ids := make([]string, len(ps))
	for i, p := range ps {
		refs[i] = fmt.Sprintf("#%d from %s", p.MessageID, p.From)
		ids[i] = strconv.FormatInt(p.MessageID, 10)
	}
	age := FormatElapsed(now.Sub(ps[0].CreatedAt).Truncate(time.Minute), l)
	if l == LocaleJA {
		return fmt.Sprintf("@%s: 確認（ack）を求められたメッセージ %d 件が未確認です（最も古いものは %s 前）: %s。read_messages で読み、acknowledge_message で ids %s を確認してください。",
			ps[0].Agent, len(ps), age, strings.Join(refs, ", "), strings.Join(ids, ","))
	}
	s := "s"
	if len(ps) == 1 {
		s = ""
	}
	return fmt.Sprintf("@%s: %d message%s asked for your acknowledgement and got none (the oldest %s ago): %s. Read them with read_messages, then call acknowledge_message with ids %s.",
		ps[0].Agent, len(ps), s, age, strings.Join(refs, ", "), strings.Join(ids, ","))
}
