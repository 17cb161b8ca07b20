// Package termtext makes text that other agents wrote safe to show on a
// person's terminal. An agent's message body, name, reason or title may
// hold escape sequences (an OSC 52 clipboard write, a cursor move that
// forges a line, a title change), bidirectional overrides that show text
// in another order than it is, or bytes that are not UTF-8. Every place
// that prints such text to a terminal goes through this package: Clean
// for multi-line text, Line for one line, Writer for a whole output
// stream, EscapeJSON for JSON output.
//
// What is removed (Unsafe): C0 controls but newline and tab (escape,
// carriage return, backspace, bell…), DEL, C1 controls (U+0080–U+009F,
// CSI and OSC among them), the bidirectional controls (embeddings,
// overrides, isolates and marks: Unicode's Bidi_Control) and the line and
// paragraph separators U+2028 and U+2029. Bytes that are not UTF-8
// become U+FFFD, so that no lone byte is read as a C1 control by an 8-bit
// terminal. The hub refuses the same characters in single-line fields
// (internal/hub/text.go); the two lists are the same rule.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether a terminal could act on r rather than show it,
// or show the text around it in another order: see the package comment.
// Newline and tab are safe.
func Unsafe(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.In(r, unicode.Bidi_Control, unicode.Zl, unicode.Zp)
}

// Clean returns s without the characters a terminal would act on (Unsafe),
// invalid UTF-8 replaced by U+FFFD; newlines and tabs are kept.
func Clean(s string) string {
	if safe(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		if !Unsafe(r) {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// Line is Clean for text shown on one line: newlines and tabs become
// spaces as well.
func Line(s string) string {
	s = Clean(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// safe reports whether s is valid UTF-8 without an unsafe character: the
// common case, which costs no copy.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f {
			return safeSlow(s[i:])
		}
	}
	return true
}

func safeSlow(s string) bool {
	for i, r := range s {
		if Unsafe(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError))) {
			return false
		}
	}
	return true
}
