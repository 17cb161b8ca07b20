package hub

import "time"

// Bounds of a host hook's injection into an agent's session.
const (
	// DefaultInjection is how many messages one injection returns when the
	// caller names no limit; MaxInjection is the most it returns.
	DefaultInjection = 20
	MaxInjection     = 50
	// MaxStopHolds is how many stops in a row the stop hook may hold; the
	// next one lets the host stop, so a held stop never loops.
	MaxStopHolds = 3
	// stopScan bounds the unread messages a stop check looks through.
	stopScan = 200
	// stopListed is how many holding messages a stop check returns.
	stopListed = 10
)

// InjectionState is where a host's hooks stand for one agent: UpTo is the
// newest message ID injected into its session or passed over (counted as
// "N more"), StopHolds how many stops in a row were held.
type InjectionState struct {
	AgentID   int64
	UpTo      int64
	StopHolds int
	UpdatedAt time.Time
}

// InjectionStart is the message ID after which the next injection starts:
// past what was injected and past what the agent has read already.
func InjectionStart(st InjectionState, readUpTo int64) int64 {
	return max(st.UpTo, readUpTo)
}

// HoldsStop reports whether an unread message keeps an agent from ending
// its turn: a direct message (no channel) or one that mentions it, except
// nudges, which ask only for activity the agent has just shown. This is
// where urgent messages join once messages carry a priority.
func HoldsStop(m *Message) bool {
	if m.Kind == KindNudge {
		return false
	}
	return m.Channel == "" || m.MentionsYou
}

// DecideStop decides a stop given how many unread messages hold it, the
// stops held in a row so far, and whether the host is already going on
// because of a held stop (continuing; Claude Code's stop_hook_active). A
// stop that is not continuing starts a new run. It returns whether to hold
// and the new count: past MaxStopHolds the stop goes through and the count
// stays, so a host that keeps continuing is let go every time.
func DecideStop(holding, held int, continuing bool) (hold bool, heldNow int) {
	if !continuing {
		held = 0
	}
	if holding == 0 {
		return false, 0
	}
	if held >= MaxStopHolds {
		return false, held
	}
	return true, held + 1
}
