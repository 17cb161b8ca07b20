package hub

import (
	"fmt"
	"strings"
	"time"
)

// Notices. The hub tells an agent what it should know without being
// asked: nudges (inactivity, unread mentions, overdue acknowledgements),
// the digest of deep work, and, to the sender of an urgent or
// ack_required message still queued for a recipient after
// ScheduleSettings.QueuedNoticeAfter, one notice naming those recipients
// and why (no live path since when, or reachable but not taken in yet).
// No agent gets more than ScheduleSettings.NoticeCap nudges and notices in
// one clock hour (NoticeAllowed): past it, an inactivity or mention nudge
// waits for the next hour, and an acknowledgement nudge or a queued notice
// is dropped (an event records it). Digests are not counted: one stands
// for many messages.

// NoticeCount is how many nudges and notices an agent got in the clock
// hour starting at Window.
type NoticeCount struct {
	Window time.Time
	Sent   int
}

// NoticeAllowed decides whether one more notice may go to an agent whose
// count is c at now, with at most limit per clock hour (0: no cap), and
// returns the count to store when it may.
func NoticeAllowed(c NoticeCount, now time.Time, limit int) (bool, NoticeCount) {
	window := now.Truncate(time.Hour)
	if !c.Window.Equal(window) {
		c = NoticeCount{Window: window}
	}
	if limit > 0 && c.Sent >= limit {
		return false, c
	}
	c.Sent++
	return true, c
}

// QueuedRecipient is a recipient for whom a message is still queued, with
// what the hub knows of its paths.
type QueuedRecipient struct {
	Name  string
	Reach Reachability
}

// queuedText writes the notice to the sender of message m, still queued
// for rs after age: it mentions the sender, names each recipient with why,
// and says where the message waits.
func queuedText(sender string, m *Message, rs []QueuedRecipient, age time.Duration, l Locale, loc *time.Location, now time.Time) string {
	why := make([]string, len(rs))
	for i, r := range rs {
		why[i] = r.Name + " (" + queuedReason(r.Reach, l, loc, now) + ")"
	}
	what := "urgent"
	if m.AckRequired {
		what = "ack_required"
		if m.Priority == PriorityUrgent {
			what = "urgent, ack_required"
		}
	}
	if l == LocaleJA {
		return fmt.Sprintf("@%s: メッセージ #%d（%s）は %s 経っても次の宛先の文脈に届いていません: %s。受信箱に保存されており、次の wait・read・セッションで届きます。",
			sender, m.ID, what, FormatElapsed(age.Truncate(time.Minute), l), strings.Join(why, "、"))
	}
	return fmt.Sprintf("@%s: your message #%d (%s) is still queued after %s for %s. It waits in their inbox and reaches them at their next wait, read or session.",
		sender, m.ID, what, FormatElapsed(age.Truncate(time.Minute), l), strings.Join(why, ", "))
}

// queuedReason says why a message is still queued for a recipient with
// reachability r.
func queuedReason(r Reachability, l Locale, loc *time.Location, now time.Time) string {
	if !r.Reachable {
		return unreachableSince(r.Since, l, loc, now)
	}
	var live []string
	for _, p := range r.Paths {
		if p.Live {
			live = append(live, p.Via.String())
		}
	}
	if l == LocaleJA {
		return "経路あり（" + strings.Join(live, ", ") + "）、まだ取り込まれていません"
	}
	return "reachable through " + strings.Join(live, ", ") + ", not taken in yet"
}
