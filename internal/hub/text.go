package hub

import (
	"regexp"
	"sync"
	"unicode"
	"unicode/utf8"
)

// checkLine returns EINVALID unless s is one line of text that can be
// shown to a person as it is: valid UTF-8 without a control character (C0
// — newline, tab and escape included —, DEL, C1), a bidirectional control
// (overrides, embeddings, isolates, marks) or a line or paragraph
// separator. It is the rule of every single-line field an agent or the
// admin writes and others are shown: names and roles, titles, reasons,
// notes. The characters refused are those internal/termtext removes from
// what is printed to a terminal (there newline and tab are kept); the two
// lists are one rule, written in both places because the domain imports
// nothing of ours.
func checkLine(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s must be valid UTF-8 text", field)
	}
	for i, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.In(r, unicode.Bidi_Control, unicode.Zl, unicode.Zp) {
			return Errorf(EINVALID, "%s holds the control character %U at byte %d: it must be one line of plain text, without newlines, tabs, escape sequences or direction overrides", field, r, i)
		}
	}
	return nil
}

// wrappedTextRoom is the room a message keeps for what the hub wraps
// around a text of its own that it posts: a pulse's header and footer, a
// cron job's "[cron NAME] ".
const wrappedTextRoom = 1024

// checkWrappedText checks the length of a text that the hub will post
// wrapped in a message of its own, against the message limit maxBody less
// wrappedTextRoom: checked when the text is set, so that it never fails
// when posted. Errors: EINVALID.
func checkWrappedText(what string, n, maxBody int) error {
	if limit := maxBody - wrappedTextRoom; n > limit {
		return Errorf(EINVALID, "%s is %d bytes: at most %d (the message limit, --max-body %d, less %d for what the hub adds around it)", what, n, limit, maxBody, wrappedTextRoom)
	}
	return nil
}

// cutText shortens s to at most n bytes on a rune boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// lazyRegexp is a pattern compiled at its first use rather than at package
// initialisation, which every process linking the package pays (hub hook and
// hub guard at each run); compiled once, safe for concurrent use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
