package deliver

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/mcpbridge"
	"github.com/agenthub/hub/internal/termtext"
)

// Bounds of one pasted notice: it is one line (a newline would submit it
// early), each body is cut at bodyMax bytes and the whole line at lineMax;
// the messages that do not fit are counted.
const (
	bodyMax = 300
	lineMax = 1200
	// moreRoom is kept free for the line counting the messages left out.
	moreRoom = 64
)

// Deliverable decides which messages are pasted into the pane: pulses,
// nudges, and what is addressed to the agent itself (direct messages and
// messages that mention it). Channel chatter waits for the agent's own
// reads. This is the one place that decides; urgent messages join here
// when messages carry a priority.
func Deliverable(m *hubv1.Message, self string) bool {
	if m.GetFrom() == self {
		return false
	}
	switch m.GetKind() {
	case "heartbeat", "nudge":
		return true
	}
	if m.GetMentionsYou() {
		return true
	}
	return m.GetChannel() == "" && slices.Contains(m.GetTo(), self)
}

// Render returns the one line pasted for msgs (at least one): framed as a
// notice from the hub, not words of the user; each message with its kind,
// ID, sender and body; then how to read and answer them. The messages stay
// unread, and the line says so. Past the line's bound the rest are counted,
// not shown: it also returns how many of msgs, from the first, it shows.
func Render(self string, msgs []*hubv1.Message) (string, int) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "[Agent Hub notice for %s, typed by hub deliver, not by the user] %s:", self, plural(len(msgs), "new message", "new messages"))
	tail := " Read them with read_messages (they stay unread until you do); answer with post_message"
	if slices.ContainsFunc(msgs, func(m *hubv1.Message) bool { return m.GetKind() == "heartbeat" }) {
		tail += ", a pulse with respond_to_pulse"
	}
	tail += "."
	shown := 0
	for i, m := range msgs {
		one := fmt.Sprintf(" (%d) %s %s from %s: %q", i+1, kindNoun(m.GetKind()), m.GetId(), mcpbridge.SenderLabel(m), clip(clean(m.GetBody()), bodyMax))
		if i > 0 && sb.Len()+len(one)+moreRoom+len(tail) > lineMax {
			break
		}
		sb.WriteString(one)
		shown++
	}
	if rest := len(msgs) - shown; rest > 0 {
		fmt.Fprintf(&sb, " … and %d more (IDs %s to %s).", rest, msgs[shown].GetId(), msgs[len(msgs)-1].GetId())
	}
	sb.WriteString(tail)
	return sb.String(), shown
}

func kindNoun(kind string) string {
	switch kind {
	case "heartbeat":
		return "pulse"
	case "nudge", "cron", "system":
		return kind
	}
	return "message"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// clean makes s one line of words: what a terminal would act on removed
// (termtext.Line), newlines and tabs made spaces, runs of spaces one.
func clean(s string) string {
	return strings.Join(strings.Fields(termtext.Line(s)), " ")
}

// clip cuts s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut + "…"
}
