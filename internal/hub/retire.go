package hub

import (
	"fmt"
	"time"
)

// Ghost retirement. An agent that has made no call for the retirement age
// (ScheduleSettings.RetireAfter, the hub's --retire-after: a week by
// default, 0 never) and holds nothing (no path reservation in force, no
// claimed task, no open path, no parked wait) is retired by the
// orchestrator: it is left
// out of its peers' lists (and, being offline, of presence), its token
// still works and its messages are kept. Its next call brings it back: at
// once in every view (a call after RetiredAt), in the store at the next
// flush of presence (ReturnAgents), with an event each way.

// Event kinds of retirement.
const (
	EventRetired  EventKind = "retired"  // offline past the retirement age: left out of peers' lists
	EventReturned EventKind = "returned" // a retired agent called again
)

// Retired reports whether agent a, whose last call was at lastSeen (the
// latest the hub knows, in memory or stored), is retired now: retired by
// the orchestrator and silent since.
func Retired(a *Agent, lastSeen time.Time) bool {
	return !a.RetiredAt.IsZero() && !lastSeen.After(a.RetiredAt)
}

// RetireCandidate is an agent the retirement step may retire: enabled, not
// retired, silent since before the cutoff, with no reservation in force and
// no claimed task (RetireTx.RetireCandidates).
type RetireCandidate struct {
	AgentID    int64
	Name       string
	LastSeenAt time.Time // zero: never called (then CreatedAt counts)
	CreatedAt  time.Time
}

// retiredText is the detail of a retirement event.
func retiredText(c RetireCandidate, after time.Duration, now time.Time) string {
	since := c.LastSeenAt
	if since.IsZero() {
		return fmt.Sprintf("retired: no call since it was created %s ago (retire after %s); its token still works", FormatElapsed(now.Sub(c.CreatedAt).Truncate(time.Minute), LocaleEN), FormatElapsed(after, LocaleEN))
	}
	return fmt.Sprintf("retired: no call for %s (retire after %s); its token still works", FormatElapsed(now.Sub(since).Truncate(time.Minute), LocaleEN), FormatElapsed(after, LocaleEN))
}
