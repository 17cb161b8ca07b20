package hub

import "testing"

func TestDecideStop(t *testing.T) {
	tests := []struct {
		name       string
		holding    int
		held       int
		continuing bool
		hold       bool
		heldNow    int
	}{
		{"no mail lets go and resets", 0, 2, true, false, 0},
		{"mail holds a new stop", 2, 0, false, true, 1},
		{"a new stop starts a new run", 1, MaxStopHolds, false, true, 1},
		{"continuing counts on", 1, 1, true, true, 2},
		{"the last hold of a run", 1, MaxStopHolds - 1, true, true, MaxStopHolds},
		{"past the cap it lets go", 1, MaxStopHolds, true, false, MaxStopHolds},
		{"and keeps letting go while continuing", 5, MaxStopHolds, true, false, MaxStopHolds},
	}
	for _, tt := range tests {
		hold, n := DecideStop(tt.holding, tt.held, tt.continuing)
		if hold != tt.hold || n != tt.heldNow {
			t.Errorf("%s: DecideStop(%d, %d, %v) = %v, %d; want %v, %d", tt.name, tt.holding, tt.held, tt.continuing, hold, n, tt.hold, tt.heldNow)
		}
	}
}

func TestHoldsStop(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		want bool
	}{
		{"direct message", Message{Kind: KindMessage}, true},
		{"pulse", Message{Kind: KindHeartbeat}, true},
		{"nudge", Message{Kind: KindNudge, MentionsYou: true}, false},
		{"channel chatter", Message{Kind: KindMessage, Channel: "#ops"}, false},
		{"channel mention", Message{Kind: KindMessage, Channel: "#ops", MentionsYou: true}, true},
	}
	for _, tt := range tests {
		if got := HoldsStop(&tt.m); got != tt.want {
			t.Errorf("%s: HoldsStop = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInjectionStart(t *testing.T) {
	if got := InjectionStart(InjectionState{UpTo: 7}, 3); got != 7 {
		t.Errorf("InjectionStart past the read cursor = %d, want 7", got)
	}
	if got := InjectionStart(InjectionState{UpTo: 7}, 12); got != 12 {
		t.Errorf("InjectionStart behind the read cursor = %d, want 12: read messages are not injected", got)
	}
}
