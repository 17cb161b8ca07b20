package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// attacks are texts an agent could send to move a person's cursor, write
// their clipboard, retitle their terminal or reorder what they read.
var attacks = map[string]string{
	"osc52 clipboard": "hi\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07there",
	"osc title":       "\x1b]0;owned\x1b\\",
	"csi cursor up":   "ok\x1b[2A\x1b[2Khub guard: commit allowed",
	"carriage return": "rm -rf /\rls -l    ",
	"backspace":       "evil\b\b\b\bgood",
	"c1 csi":          "a\u009b2Jb",
	"c1 osc":          "a\u009d0;t\u009cb",
	"raw c1 byte":     "a\x9b2Jb",
	"bidi override":   "file\u202etxt.exe",
	"bidi isolate":    "x\u2066y\u2069z",
	"bidi mark":       "\u200f\u061c",
	"del":             "a\x7fb",
	"bell and nul":    "\a\x00",
	"line separator":  "a\u2028b\u2029c",
	"dcs":             "\x1bP+q\x1b\\",
	"bracketed paste": "\x1b[201~echo pwned\x1b[200~",
}

func TestCleanRemovesWhatTerminalsActOn(t *testing.T) {
	t.Parallel()
	for name, s := range attacks {
		got := Clean(s)
		for i, r := range got {
			if Unsafe(r) {
				t.Errorf("%s: Clean(%q) = %q holds %U at %d", name, s, got, r, i)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: Clean(%q) = %q is not UTF-8", name, s, got)
		}
		if strings.ContainsAny(got, "\x1b\r") {
			t.Errorf("%s: Clean(%q) = %q", name, s, got)
		}
	}
}

func TestCleanKeepsText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "two\nlines\tand a tab", "日本語のメッセージ", "emoji 🚀 and é", "שלום עולם", "[31m is not an escape"} {
		if got := Clean(s); got != s {
			t.Errorf("Clean(%q) = %q, want it unchanged", s, got)
		}
	}
	if got, want := Clean("a\x1b[31mred\x1b[0m\r\n"), "a[31mred[0m\n"; got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
	if got, want := Clean("a\xffb"), "a\ufffdb"; got != want {
		t.Errorf("Clean(invalid UTF-8) = %q, want %q", got, want)
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	if got, want := Line("one\ntwo\tthree\x1b[Kfour"), "one two three[Kfour"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestUnsafe(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0, 7, 8, 0x0d, 0x1b, 0x7f, 0x80, 0x85, 0x9b, 0x9f, 0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, 0x2028, 0x2029} {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
	}
	for _, r := range []rune{'\n', '\t', ' ', 'a', 0xa0, 0xe9, 0x200b, 0x3042, 0x1f680, utf8.RuneError} {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	// A C1 control split across two writes is still seen whole.
	for _, part := range []string{"a\xc2", "\x9b2Jb ", "\x1b]52;c;eA==\x07", "é"[:1], "é"[1:], "\xe3\x81"} {
		if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
			t.Fatalf("Write(%q) = %d, %v", part, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "a2Jb ]52;c;eA==é\ufffd"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	buf.Reset()
	if err := w.ClearScreen(); err != nil || buf.String() != "\x1b[H\x1b[2J" {
		t.Errorf("ClearScreen wrote %q, %v", buf.String(), err)
	}
	if w.IsTerminal() {
		t.Error("a buffer is not a terminal")
	}
}

func TestEscapeJSON(t *testing.T) {
	t.Parallel()
	for name, s := range attacks {
		s = strings.ToValidUTF8(s, "\ufffd")
		b, err := json.Marshal(map[string]string{"body": s})
		if err != nil {
			t.Fatal(err)
		}
		out := EscapeJSON(b)
		for _, r := range string(out) {
			if Unsafe(r) {
				t.Errorf("%s: EscapeJSON left %U in %s", name, r, out)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil || back["body"] != s {
			t.Errorf("%s: EscapeJSON changed the value: %q (%v), want %q", name, back["body"], err, s)
		}
	}
	plain := []byte(`{"a": "b\n"}`)
	if got := EscapeJSON(plain); &got[0] != &plain[0] {
		t.Error("EscapeJSON copied JSON that needed no escape")
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range attacks {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Clean(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Clean(%q) = %q holds %U", s, got, r)
			}
		}
		if Clean(got) != got {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
		if strings.ContainsAny(Line(s), "\n\t") {
			t.Fatalf("Line(%q) holds a newline or tab", s)
		}
	})
}
