package termtext

import (
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// Writer is an output stream (a program's stdout or stderr) that removes
// what Clean removes from everything written to it. A character split
// across two writes is held until the second; Flush writes what is held.
// It is safe for concurrent use, as the stream it wraps is.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a character the next write completes
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Write writes p cleaned. It returns len(p) when the cleaned text was
// written, whatever was removed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if len(w.pending) > 0 {
		p = append(w.pending, p...)
		w.pending = nil
	}
	if cut := incompleteTail(p); cut < len(p) {
		w.pending = append([]byte(nil), p[cut:]...)
		p = p[:cut]
	}
	if _, err := io.WriteString(w.w, Clean(string(p))); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a character left incomplete by the last write, as U+FFFD.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	w.pending = nil
	_, err := io.WriteString(w.w, string(utf8.RuneError))
	return err
}

// IsTerminal reports whether the stream goes to a terminal (a character
// device) rather than a file or a pipe.
func (w *Writer) IsTerminal() bool {
	f, ok := w.w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ClearScreen moves the cursor home and clears the screen: the one
// control sequence a Writer sends, for live views that redraw.
func (w *Writer) ClearScreen() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := io.WriteString(w.w, "\033[H\033[2J")
	return err
}

// incompleteTail returns where a character cut short by the end of p
// starts (len(p) when p ends on a whole character or on bytes that can
// never start one).
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}

// EscapeJSON returns the JSON text b with every unsafe character (Unsafe)
// written as a \u escape: the same JSON value, with nothing a terminal
// would act on. Encoders escape the C0 controls already, but not DEL, C1
// controls or bidirectional overrides. b must be valid UTF-8 (as every
// JSON encoder of ours writes it); outside strings JSON holds only ASCII,
// so every such character is inside a string, where an escape means the
// same character.
func EscapeJSON(b []byte) []byte {
	if safe(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for _, r := range string(b) {
		if Unsafe(r) { // every unsafe character is in the BMP: one escape
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}
