package postgres

import (
	"strconv"
	"testing"
)

// Every change reads back from its payload; anything else is refused, so
// that Watch forgets every cached agent rather than guess.
func TestParseChange(t *testing.T) {
	for change, name := range changeNames {
		id, got, ok := parseChange(name + ":" + strconv.Itoa(42))
		if !ok || id != 42 || got != change {
			t.Errorf("parseChange(%s:42) = %d, %v, %v; want 42, %v, true", name, id, got, ok, change)
		}
	}
	if len(changeNames) != 5 {
		t.Errorf("changeNames has %d entries, want one per hub.AgentChange and the profile's (5)", len(changeNames))
	}
	for _, p := range []string{"", "token", "token:", "token:x", "agent:1", "42", ":42"} {
		if _, _, ok := parseChange(p); ok {
			t.Errorf("parseChange(%q) accepted", p)
		}
	}
}
