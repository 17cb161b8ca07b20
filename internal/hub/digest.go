package hub

import (
	"fmt"
	"strings"
)

// Digests. While an agent is in deep work (flexible or strict), its paths
// that interrupt it (hooks, channel pushes, the tmux sidecar) pass over
// its low-priority messages and hold them (Receipts.HandOut); when the
// deep work ends, the orchestrator sends it one digest naming those it has
// not taken in meanwhile (SendDigests). Its own waits and reads still
// return them: the agent asked. The messages stay unread in its inbox.

// HeldMessage is a low-priority message held from an agent's paths while
// it was in deep work (DigestTx.HeldDue).
type HeldMessage struct {
	AgentID   int64
	Agent     string
	Locale    string // the agent's own locale, "" for the hub's
	MessageID int64
	From      string
	// SenderKind is the kind of principal From is (principal.go): the
	// digest names it, as every message an agent reads does.
	SenderKind SenderKind
	Channel    string
	Body       string
	// Taken: read, or in the agent's context, since it was held: the
	// digest leaves it out.
	Taken bool
}

// Bounds of a digest.
const (
	digestListed  = 10  // messages named one by one
	digestExcerpt = 120 // bytes of each one's body
)

// digestText writes the digest of one agent's held messages hs (none
// taken, oldest first): it mentions the agent, names the messages with the
// start of each, and says how to read them.
func digestText(hs []HeldMessage, l Locale) string {
	var b strings.Builder
	n := len(hs)
	if l == LocaleJA {
		fmt.Fprintf(&b, "@%s: 集中作業中に優先度の低いメッセージが %d 件届きました:", hs[0].Agent, n)
	} else {
		s := "s"
		if n == 1 {
			s = ""
		}
		fmt.Fprintf(&b, "@%s: %d low-priority message%s arrived while you were in deep work:", hs[0].Agent, n, s)
	}
	for i, h := range hs {
		if i == digestListed {
			if l == LocaleJA {
				fmt.Fprintf(&b, "\n… ほか %d 件。", n-i)
			} else {
				fmt.Fprintf(&b, "\n… and %d more.", n-i)
			}
			break
		}
		fmt.Fprintf(&b, "\n- #%d from %s (%s)", h.MessageID, h.From, h.SenderKind)
		if h.Channel != "" {
			fmt.Fprintf(&b, " in %s", h.Channel)
		}
		b.WriteString(": ")
		b.WriteString(excerpt(h.Body, digestExcerpt))
	}
	after := FormatMessageID(hs[0].MessageID - 1)
	if l == LocaleJA {
		fmt.Fprintf(&b, "\nread_messages after=%s で読めます（未読のままです）。", after)
	} else {
		fmt.Fprintf(&b, "\nThey are still unread: read them with read_messages after=%s.", after)
	}
	return b.String()
}

// excerpt is the start of body on one line, at most n bytes, cut on a
// rune boundary and marked (cutText).
func excerpt(body string, n int) string {
	return cutText(strings.Join(strings.Fields(body), " "), n)
}
