package hub

import (
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
