package hub

import (
	"strconv"
	"strings"
	"time"
)

// Nudges: an agent inactive past the inactivity timeout, or with unread
// mentions older than a limit, gets a system message from the orchestrator
// that mentions it, which also wakes its parked wait. One nudge per episode,
// then exponential backoff; never while strict deep work is in force; the
// episode ends when the agent acts.

// NudgeInput is what DecideNudge needs to know about one agent at a time.
type NudgeInput struct {
	AgentName      string
	LastActivity   time.Time // last conscious activity (registration when none)
	StrictUntil    time.Time // end of the strict deep work in force; zero when none
	UnreadMentions int64     // unread messages mentioning the agent (not counting nudges)
	OldestMention  time.Time // the oldest of them
	Locale         Locale
	Location       *time.Location // for the clock times in the text
}

// NudgeDecision is what DecideNudge decided.
type NudgeDecision struct {
	Nudge   bool
	Check   AgentCheck // the updated episode and nudge count (NextCheckAt untouched)
	Text    string     // the message, when Nudge
	Reason  string     // "inactivity", "mentions" or both joined by "+", when Nudge
	NextAt  time.Time  // when nudges should be looked at again; zero when only new input matters
	Episode string
}

// NudgeGap returns the wait after the nth nudge of an episode before the
// next: base × 2^n (2×, 4×, 8× …), at most maxGap.
func NudgeGap(n int, base, maxGap time.Duration) time.Duration {
	g := base
	for i := 0; i < n && g < maxGap; i++ {
		g *= 2
	}
	return min(g, maxGap)
}

// DecideNudge applies the nudge rules to one agent's check state c at now.
func DecideNudge(c AgentCheck, in NudgeInput, now time.Time, set ScheduleSettings) NudgeDecision {
	d := NudgeDecision{Check: c}
	if in.StrictUntil.After(now) {
		// Never during strict deep work; look again when it ends. The
		// episode is kept, so it goes on (with its backoff) afterwards.
		d.NextAt = in.StrictUntil
		return d
	}
	inactiveAt := in.LastActivity.Add(set.InactivityTimeout)
	inactive := !now.Before(inactiveAt)
	var mentionAt time.Time
	mentions := false
	if in.UnreadMentions > 0 && !in.OldestMention.IsZero() {
		mentionAt = in.OldestMention.Add(set.MentionAge)
		mentions = !now.Before(mentionAt)
	}
	if !inactive && !mentions {
		// No episode (or it ended: the agent acted or read its mentions).
		d.Check.Episode, d.Check.NudgeCount = "", 0
		d.NextAt = inactiveAt
		if !mentionAt.IsZero() && mentionAt.Before(d.NextAt) {
			d.NextAt = mentionAt
		}
		return d
	}
	var episode string
	var reasons []string
	if inactive {
		episode = "inactive@" + strconv.FormatInt(in.LastActivity.UnixNano(), 10)
		reasons = append(reasons, "inactivity")
	} else {
		episode = "mentions@" + strconv.FormatInt(in.OldestMention.UnixNano(), 10)
	}
	if mentions {
		reasons = append(reasons, "mentions")
	}
	d.Episode = episode
	if episode == c.Episode && c.NudgeCount > 0 {
		due := c.LastNudgeAt.Add(NudgeGap(c.NudgeCount, set.InactivityTimeout, set.NudgeMaxBackoff))
		if now.Before(due) {
			d.NextAt = due
			return d
		}
		d.Check.NudgeCount++
	} else {
		d.Check.Episode, d.Check.NudgeCount = episode, 1
	}
	d.Nudge = true
	d.Check.LastNudgeAt = now
	d.Reason = strings.Join(reasons, "+")
	d.Text = nudgeText(in, inactive, mentions, now)
	d.NextAt = now.Add(NudgeGap(d.Check.NudgeCount, set.InactivityTimeout, set.NudgeMaxBackoff))
	return d
}

// nudgeText writes the nudge message: it mentions the agent and says why.
func nudgeText(in NudgeInput, inactive, mentions bool, now time.Time) string {
	loc := in.Location
	if loc == nil {
		loc = time.Local
	}
	var b strings.Builder
	b.Grow(len(in.AgentName) + 320)
	b.WriteString("@")
	b.WriteString(in.AgentName)
	b.WriteString(": ")
	var clock [8]byte
	if in.Locale == LocaleJA {
		if inactive {
			b.WriteString(FormatElapsed(now.Sub(in.LastActivity).Truncate(time.Minute), in.Locale))
			b.WriteString(" 活動がありません（最後の活動 ")
			b.Write(in.LastActivity.In(loc).AppendFormat(clock[:0], "15:04"))
			b.WriteString("）。create_activity_log か checkpoint で進捗を記録するか、start_deep_work で集中作業を宣言してください。")
		}
		if mentions {
			if inactive {
				b.WriteString(" ")
			}
			b.Write(in.OldestMention.In(loc).AppendFormat(clock[:0], "15:04"))
			b.WriteString(" 以降の未読メンションが ")
			b.WriteString(strconv.FormatInt(in.UnreadMentions, 10))
			b.WriteString(" 件あります。read_messages で確認してください。")
		}
		return b.String()
	}
	if inactive {
		b.WriteString("no activity for ")
		b.WriteString(FormatElapsed(now.Sub(in.LastActivity).Truncate(time.Minute), in.Locale))
		b.WriteString(" (last at ")
		b.Write(in.LastActivity.In(loc).AppendFormat(clock[:0], "15:04"))
		b.WriteString("): only activity logs and checkpoints count, not messages or waits. Record progress with create_activity_log or checkpoint, or declare deep work with start_deep_work.")
	}
	if mentions {
		if inactive {
			b.WriteString(" ")
		}
		b.WriteString(strconv.FormatInt(in.UnreadMentions, 10))
		b.WriteString(" unread mention")
		if in.UnreadMentions != 1 {
			b.WriteString("s")
		}
		b.WriteString(" since ")
		b.Write(in.OldestMention.In(loc).AppendFormat(clock[:0], "15:04"))
		b.WriteString(": read them with read_messages.")
	}
	return b.String()
}

// idleRecheck is the longest an agent goes without a nudge check when
// nothing is scheduled (a safety net).
const idleRecheck = 24 * time.Hour

// NudgeResult counts what CheckNudges did.
type NudgeResult struct {
	Checked int // agents looked at
	Nudged  int // nudges sent
}

// AgentCheck is an agent's place in the orchestrator's check schedule and
// its nudge episode.
type AgentCheck struct {
	AgentID     int64
	NextCheckAt time.Time // zero: nothing scheduled
	// Nudge episode: Episode identifies what the nudges are about (the
	// inactivity since a given activity, or the unread mentions since a
	// given message); a new episode starts when it changes.
	Episode     string
	NudgeCount  int
	LastNudgeAt time.Time
	// Notices counts the agent's nudges and notices in the current clock
	// hour (notice.go): read with the check, and written by ClaimNudges
	// with the nudge it counts (PutAgentChecks leaves it as stored).
	Notices NoticeCount
}
