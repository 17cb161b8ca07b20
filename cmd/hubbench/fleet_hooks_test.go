package main

import (
	"testing"
	"time"
)

// TestBridgeHooksAskTheHubOnlyWhenSomethingIsNew follows one streaming
// agent's hooks through what its bridge sees: before the stream is open,
// after a frame with messages its channel did not show, after the stream
// ended and once the refresh is due they go to the hub; with nothing new,
// or only what its channel showed, they are answered quietly.
func TestBridgeHooksAskTheHubOnlyWhenSomethingIsNew(t *testing.T) {
	h := newBridgeHooks()
	t0 := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	hook := func(at time.Time) bool {
		toHub, _, answered := h.ask(at)
		if toHub {
			answered(at)
		}
		return toHub
	}
	steps := []struct {
		what   string
		before func()
		at     time.Duration
		toHub  bool
	}{
		{"no stream yet", nil, 0, true},
		{"the stream's first frame, nothing new since the last hook", func() { h.frame(0) }, time.Second, false},
		{"again nothing new", nil, 2 * time.Second, false},
		{"a frame with a message", func() { h.frame(1) }, 3 * time.Second, true},
		{"the hub answered it", nil, 4 * time.Second, false},
		{"an empty frame (the cursor moved)", func() { h.frame(0) }, 5 * time.Second, false},
		{"a frame with a message its channel showed", func() { h.frame(1)() }, 6 * time.Second, false},
		{"a frame shown after a frame not shown", func() { h.frame(1); h.frame(1)() }, 7 * time.Second, true},
		{"the refresh is due", nil, 7*time.Second + bridgeHookRefresh, true},
		{"the stream ended", func() { h.ended() }, 7*time.Second + bridgeHookRefresh + time.Second, true},
		{"closed until its next frame", nil, 7*time.Second + bridgeHookRefresh + 2*time.Second, true},
		{"open again", func() { h.frame(0) }, 7*time.Second + bridgeHookRefresh + 3*time.Second, false},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		if got := hook(t0.Add(s.at)); got != s.toHub {
			t.Errorf("%s: to the hub %v, want %v", s.what, got, s.toHub)
		}
	}
}

// TestBridgeHooksAMessageDuringAHookSendsTheNextToo: a frame that comes
// while a hook is at the hub may be past what the hub answered it, so
// the next hook goes to the hub as well.
func TestBridgeHooksAMessageDuringAHookSendsTheNextToo(t *testing.T) {
	h := newBridgeHooks()
	h.frame(0)
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	toHub, _, answered := h.ask(now)
	if !toHub {
		t.Fatal("the first hook was answered without the hub")
	}
	h.frame(2)
	answered(now)
	if toHub, _, _ := h.ask(now.Add(time.Second)); !toHub {
		t.Error("a hook after a message that came during the last one was answered without the hub")
	}
}

// TestBridgeHooksAfterAnEventOfTheHost: after a notification or a stop,
// which the hub answers, the next tool use goes to the hub with its note,
// as does one that was at the hub meanwhile; the one after it is quiet.
func TestBridgeHooksAfterAnEventOfTheHost(t *testing.T) {
	h := newBridgeHooks()
	h.frame(0)
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	_, note, answered := h.ask(now)
	if note {
		t.Error("the first hook notes an event of the host that never came")
	}
	answered(now)
	if toHub, _, _ := h.ask(now.Add(time.Second)); toHub {
		t.Fatal("a hook with nothing new went to the hub")
	}
	t2 := now.Add(bridgeHookRefresh)
	_, _, during := h.ask(t2) // a refresh, at the hub during the event
	eventAnswered := h.event()
	during(t2)
	eventAnswered()
	toHub, note, answered := h.ask(t2.Add(time.Second))
	if !toHub || !note {
		t.Fatalf("the tool use after a stop: to the hub %v with its note %v, want both", toHub, note)
	}
	answered(t2.Add(time.Second))
	if toHub, note, _ := h.ask(t2.Add(2 * time.Second)); toHub || note {
		t.Errorf("the tool use after that: to the hub %v, note %v; want quiet", toHub, note)
	}
}
