package hub_test

import (
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestBeatReading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		since int64
		want  string
	}{
		{-1, hub.BeatActiveFlow},
		{0, hub.BeatActiveFlow},
		{2, hub.BeatActiveFlow},
		{3, hub.BeatShortPause},
		{12, hub.BeatShortPause},
		{13, hub.BeatSessionInterrupted},
		{72, hub.BeatSessionInterrupted},
		{73, hub.BeatNewDay},
		{288, hub.BeatNewDay},
		{289, hub.BeatLongAbsence},
		{100000, hub.BeatLongAbsence},
	}
	for _, tt := range tests {
		if got := hub.BeatReading(tt.since); got != tt.want {
			t.Errorf("BeatReading(%d) = %q, want %q", tt.since, got, tt.want)
		}
	}
}

func TestBeatsDue(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 31, 11, 15, 0, 0, time.UTC)
	iv := 5 * time.Minute
	tests := []struct {
		name     string
		last     time.Time
		interval time.Duration
		now      time.Time
		want     int64
	}{
		{"same instant", t0, iv, t0, 0},
		{"just before", t0, iv, t0.Add(iv - time.Nanosecond), 0},
		{"exactly one", t0, iv, t0.Add(iv), 1},
		{"one and a half", t0, iv, t0.Add(iv * 3 / 2), 1},
		{"a day down", t0, iv, t0.Add(24 * time.Hour), 288},
		{"clock went back", t0, iv, t0.Add(-time.Hour), 0},
		{"zero interval", t0, 0, t0.Add(time.Hour), 0},
		{"never started", time.Time{}, iv, t0, 0},
	}
	for _, tt := range tests {
		if got := hub.BeatsDue(tt.last, tt.interval, tt.now); got != tt.want {
			t.Errorf("%s: BeatsDue = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestAdvanceBeatsStaysOnGrid(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC)
	iv := 5 * time.Minute
	s := hub.NewBeatState(t0)
	// Ticks every 5 s with jitter: the beat advances exactly once per interval.
	now := t0
	for i := 0; i < 12*60; i++ { // one hour of 5 s ticks
		now = now.Add(5*time.Second + time.Duration(i%3)*time.Millisecond)
		s, _ = hub.AdvanceBeats(s, iv, now)
	}
	if got, want := s.Beat, int64(hub.BeatsDue(t0, iv, now)); got != want {
		t.Fatalf("beat after an hour = %d, want %d", got, want)
	}
	if off := s.LastBeatAt.Sub(t0) % iv; off != 0 {
		t.Errorf("LastBeatAt %v is off the grid by %v", s.LastBeatAt, off)
	}
	// A restart after a long outage counts the missed beats at once.
	s2, n := hub.AdvanceBeats(s, iv, s.LastBeatAt.Add(24*time.Hour+time.Minute))
	if n != 288 || s2.Beat != s.Beat+288 {
		t.Errorf("after a day down: n=%d beat=%d, want n=288 beat=%d", n, s2.Beat, s.Beat+288)
	}
	if !s2.StartedAt.Equal(t0) {
		t.Errorf("StartedAt moved to %v", s2.StartedAt)
	}
}

func TestSinceLast(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ beat, last, want int64 }{{847, 845, 2}, {10, 10, 0}, {5, 9, 0}} {
		if got := hub.SinceLast(tt.beat, tt.last); got != tt.want {
			t.Errorf("SinceLast(%d, %d) = %d, want %d", tt.beat, tt.last, got, tt.want)
		}
	}
}
