package mcpbridge

import (
	"strings"
	"testing"
)

func TestChannelNotificationNamesKindAndPulse(t *testing.T) {
	tests := []struct {
		name   string
		msgs   []Message
		header string
		kind   string
		pulse  bool
	}{
		{"pulse", []Message{{ID: "7", From: "orchestrator", To: []string{"bob"}, Kind: "pulse", Body: "beat 3"}},
			"A pulse from agent orchestrator via Agent Hub", "pulse", true},
		{"nudge", []Message{{ID: "8", From: "orchestrator", To: []string{"bob"}, Kind: "nudge", Body: "log a reflection"}},
			"A nudge from agent orchestrator via Agent Hub", "nudge", false},
		{"channel message", []Message{{ID: "9", From: "alice", Channel: "#ops", Body: "deploying"}},
			"A message from agent alice via Agent Hub", "message", false},
		{"mixed batch", []Message{
			{ID: "10", From: "alice", To: []string{"bob"}, Body: "hi"},
			{ID: "11", From: "orchestrator", To: []string{"bob"}, Kind: "pulse", Body: "beat 4"},
		}, "2 messages from agents alice, orchestrator via Agent Hub", "message,pulse", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := channelNotification(tt.msgs)
			if !strings.HasPrefix(p.Content, tt.header) {
				t.Errorf("content starts %q, want %q", p.Content[:min(len(p.Content), 80)], tt.header)
			}
			if !strings.Contains(strings.SplitN(p.Content, "\n", 2)[0], "not the user") {
				t.Errorf("header %q does not say it is not from the user", strings.SplitN(p.Content, "\n", 2)[0])
			}
			if p.Meta["kind"] != tt.kind {
				t.Errorf("meta kind = %q, want %q", p.Meta["kind"], tt.kind)
			}
			if got := strings.Contains(p.Content, "respond_to_pulse"); got != tt.pulse {
				t.Errorf("pulse hint present = %v, want %v", got, tt.pulse)
			}
			if _, ok := p.Meta["more"]; ok {
				t.Errorf("meta more = %q for a batch within the bound", p.Meta["more"])
			}
		})
	}
	if got := channelNotification([]Message{{ID: "9", From: "alice", Channel: "#ops", Body: "x"}}).Meta["channel"]; got != "#ops" {
		t.Errorf("meta channel = %q, want #ops", got)
	}
}
