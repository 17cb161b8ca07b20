package hub

import (
	"testing"
	"time"
)

func TestWaitBudget(t *testing.T) {
	t.Parallel()
	b := waitBudget{Default: 60 * time.Second, Max: 60 * time.Second, Margin: 500 * time.Millisecond}
	now := time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)
	secs := func(n int32) *int32 { return &n }
	tests := []struct {
		name      string
		requested *int32
		deadline  time.Time
		want      time.Duration
	}{
		{"default", nil, time.Time{}, 60 * time.Second},
		{"peek", secs(0), time.Time{}, 0},
		{"asked", secs(5), time.Time{}, 5 * time.Second},
		{"clamped to the maximum", secs(3600), time.Time{}, 60 * time.Second},
		{"margin kept before the deadline", secs(30), now.Add(10 * time.Second), 9500 * time.Millisecond},
		{"deadline later than the timeout", secs(5), now.Add(time.Minute), 5 * time.Second},
		{"deadline inside the margin", secs(30), now.Add(200 * time.Millisecond), 0},
		{"deadline passed", nil, now.Add(-time.Second), 0},
	}
	for _, tt := range tests {
		got, err := b.park(tt.requested, now, tt.deadline)
		if err != nil || got != tt.want {
			t.Errorf("%s: park = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := b.park(secs(-1), now, time.Time{}); ErrorCode(err) != EINVALID {
		t.Errorf("negative: err = %v, want EINVALID", err)
	}
}
