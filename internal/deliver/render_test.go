package deliver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

func TestDeliverable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    *hubv1.Message
		want bool
	}{
		{"direct", &hubv1.Message{From: "bob", To: []string{"alice"}}, true},
		{"direct to several", &hubv1.Message{From: "bob", To: []string{"carol", "alice"}}, true},
		{"to someone else", &hubv1.Message{From: "bob", To: []string{"carol"}}, false},
		{"channel", &hubv1.Message{From: "bob", Channel: "#ops"}, false},
		{"channel mentioning alice", &hubv1.Message{From: "bob", Channel: "#ops", MentionsYou: true}, true},
		{"pulse", &hubv1.Message{From: "orchestrator", To: []string{"alice"}, Kind: "heartbeat"}, true},
		{"nudge", &hubv1.Message{From: "orchestrator", Channel: "#ops", Kind: "nudge"}, true},
		{"own post", &hubv1.Message{From: "alice", To: []string{"alice"}}, false},
	}
	for _, tt := range tests {
		if got := Deliverable(tt.m, "alice"); got != tt.want {
			t.Errorf("%s: Deliverable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	line, shown := Render("alice", []*hubv1.Message{
		{Id: "7", From: "orchestrator", SenderKind: hubv1.SenderKind_SENDER_KIND_HUB, Kind: "heartbeat", Body: "check the queue"},
		{Id: "9", From: "bob", SenderKind: hubv1.SenderKind_SENDER_KIND_AGENT, Body: "line one\nline two\t\x1b[31mred\x1b[0m"},
	})
	if shown != 2 {
		t.Errorf("shown = %d, want 2", shown)
	}
	for _, want := range []string{
		"[Agent Hub notice for alice, typed by hub deliver, not by the user] 2 new messages:",
		`(1) pulse 7 from orchestrator (hub): "check the queue"`,
		`(2) message 9 from bob (agent): "line one line two [31mred[0m"`,
		"they stay unread", "a pulse with respond_to_pulse.",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("line lacks %q:\n%s", want, line)
		}
	}
	for _, r := range line {
		if r < 0x20 || r == 0x7f {
			t.Fatalf("line holds control character %U: %q", r, line)
		}
	}

	// Bounded: long bodies are cut, many messages are counted.
	var many []*hubv1.Message
	for i := range 40 {
		many = append(many, &hubv1.Message{Id: fmt.Sprint(100 + i), From: "bob", Body: strings.Repeat("é", 400)})
	}
	line, shown = Render("alice", many)
	if len(line) > lineMax {
		t.Errorf("line is %d bytes, over %d", len(line), lineMax)
	}
	if shown == 0 || shown >= len(many) || !strings.Contains(line, fmt.Sprintf("(%d) message %d from", shown, 100+shown-1)) ||
		strings.Contains(line, fmt.Sprintf("(%d) message", shown+1)) || !strings.Contains(line, fmt.Sprintf("%d more (IDs %d to", len(many)-shown, 100+shown)) {
		t.Errorf("shown = %d of %d, the line does not agree:\n%s", shown, len(many), line)
	}
	if !strings.Contains(line, "…\"") || !strings.Contains(line, "more (IDs ") || !strings.Contains(line, "to 139).") {
		t.Errorf("line does not mark the cuts and count the rest:\n%s", line)
	}
	if strings.Contains(line, "pulse") {
		t.Errorf("no pulse among them, yet the line speaks of one:\n%s", line)
	}
}

func TestIdleWatch(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w idleWatch
	steps := []struct {
		screen string
		at     time.Duration
		want   time.Duration
	}{
		{"a", 0, 0},
		{"a", time.Second, time.Second},
		{"b", 2 * time.Second, 0}, // changed: busy again
		{"b", 5 * time.Second, 3 * time.Second},
		{"b", 6 * time.Second, 4 * time.Second},
	}
	for i, s := range steps {
		if got := w.observe(s.screen, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: idle %v, want %v", i, got, s.want)
		}
	}
}

func TestPaneIsShell(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{"bash": true, "-zsh": true, "/bin/sh": true, "claude": false, "node": false, "cat": false} {
		if got := (Pane{Command: cmd}).IsShell(); got != want {
			t.Errorf("IsShell(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestCursorFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "alice.deliver-cursor")
	if c, err := loadCursor(path); err != nil || c != "" {
		t.Fatalf("no file: %q, %v; want empty", c, err)
	}
	if err := saveCursor(path, "42"); err != nil {
		t.Fatal(err)
	}
	if err := saveCursor(path, "43"); err != nil {
		t.Fatal(err)
	}
	if c, err := loadCursor(path); err != nil || c != "43" {
		t.Errorf("read back %q, %v; want 43", c, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files beside the cursor, want none left over", len(entries)-1)
	}
	os.WriteFile(path, []byte("abc\n"), 0o600)
	if _, err := loadCursor(path); err == nil || !strings.Contains(err.Error(), "not a message ID") {
		t.Errorf("garbage cursor: %v", err)
	}
}
