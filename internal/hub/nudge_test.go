package hub_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestNudgeGap(t *testing.T) {
	t.Parallel()
	base, maxGap := 10*time.Minute, 4*time.Hour
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{0, 10 * time.Minute}, {1, 20 * time.Minute}, {2, 40 * time.Minute}, {4, 160 * time.Minute}, {5, 4 * time.Hour}, {50, 4 * time.Hour}} {
		if got := hub.NudgeGap(tt.n, base, maxGap); got != tt.want {
			t.Errorf("NudgeGap(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestDecideNudge(t *testing.T) {
	t.Parallel()
	set := hub.DefaultScheduleSettings()
	now := time.Date(2026, 2, 19, 10, 42, 0, 0, time.UTC)
	last := now.Add(-12 * time.Minute)
	in := hub.NudgeInput{AgentName: "claude", LastActivity: last, Locale: hub.LocaleEN, Location: time.UTC}
	episode := "inactive@" + strconv.FormatInt(last.UnixNano(), 10)
	tests := []struct {
		name      string
		check     hub.AgentCheck
		mod       func(*hub.NudgeInput)
		wantNudge bool
		wantCount int
		wantNext  time.Time
		wantText  []string
	}{
		{"new inactivity episode", hub.AgentCheck{}, nil, true, 1, now.Add(20 * time.Minute), []string{"@claude: no activity for 12m (last at 10:30)"}},
		{"active agent", hub.AgentCheck{Episode: episode, NudgeCount: 3}, func(in *hub.NudgeInput) { in.LastActivity = now.Add(-time.Minute) }, false, 0, now.Add(9 * time.Minute), nil},
		{"backoff not over", hub.AgentCheck{Episode: episode, NudgeCount: 1, LastNudgeAt: now.Add(-19 * time.Minute)}, nil, false, 1, now.Add(time.Minute), nil},
		{"backoff over", hub.AgentCheck{Episode: episode, NudgeCount: 1, LastNudgeAt: now.Add(-20 * time.Minute)}, nil, true, 2, now.Add(40 * time.Minute), nil},
		{"strict deep work", hub.AgentCheck{}, func(in *hub.NudgeInput) { in.StrictUntil = now.Add(time.Hour) }, false, 0, now.Add(time.Hour), nil},
		{"strict deep work ended", hub.AgentCheck{}, func(in *hub.NudgeInput) { in.StrictUntil = now }, true, 1, now.Add(20 * time.Minute), nil},
		{"old mentions while active", hub.AgentCheck{}, func(in *hub.NudgeInput) {
			in.LastActivity = now.Add(-time.Minute)
			in.UnreadMentions, in.OldestMention = 3, now.Add(-11*time.Minute)
		}, true, 1, now.Add(20 * time.Minute), []string{"3 unread mentions since 10:31"}},
		{"fresh mention", hub.AgentCheck{}, func(in *hub.NudgeInput) {
			in.LastActivity = now.Add(-time.Minute)
			in.UnreadMentions, in.OldestMention = 1, now.Add(-2*time.Minute)
		}, false, 0, now.Add(8 * time.Minute), nil},
		{"inactive with mentions", hub.AgentCheck{}, func(in *hub.NudgeInput) {
			in.UnreadMentions, in.OldestMention = 1, now.Add(-30*time.Minute)
		}, true, 1, now.Add(20 * time.Minute), []string{"no activity for 12m", "1 unread mention since 10:12"}},
		{"japanese", hub.AgentCheck{}, func(in *hub.NudgeInput) { in.Locale = hub.LocaleJA }, true, 1, now.Add(20 * time.Minute), []string{"@claude: 12分 活動がありません"}},
	}
	for _, tt := range tests {
		in2 := in
		if tt.mod != nil {
			tt.mod(&in2)
		}
		d := hub.DecideNudge(tt.check, in2, now, set)
		if d.Nudge != tt.wantNudge || d.Check.NudgeCount != tt.wantCount || !d.NextAt.Equal(tt.wantNext) {
			t.Errorf("%s: nudge=%v count=%d next=%v; want %v %d %v", tt.name, d.Nudge, d.Check.NudgeCount, d.NextAt.Sub(now), tt.wantNudge, tt.wantCount, tt.wantNext.Sub(now))
		}
		for _, w := range tt.wantText {
			if !strings.Contains(d.Text, w) {
				t.Errorf("%s: text %q lacks %q", tt.name, d.Text, w)
			}
		}
	}
}

func TestActiveHoursNextStart(t *testing.T) {
	t.Parallel()
	at := func(d, h, m int) time.Time { return time.Date(2026, 2, d, h, m, 0, 0, time.UTC) }
	for _, tt := range []struct {
		window string
		now    time.Time
		want   time.Time
	}{
		{"09:00-18:00", at(19, 8, 0), at(19, 9, 0)},
		{"09:00-18:00", at(19, 18, 0), at(20, 9, 0)},
		{"09:00-18:00", at(19, 10, 0), at(19, 10, 0)},
		{"22:00-06:00", at(19, 12, 0), at(19, 22, 0)},
		{"22:00-06:00", at(19, 23, 0), at(19, 23, 0)},
	} {
		w, err := hub.ParseActiveHours(tt.window)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.NextStart(tt.now, time.UTC); !got.Equal(tt.want) {
			t.Errorf("%s.NextStart(%v) = %v, want %v", tt.window, tt.now, got, tt.want)
		}
	}
}
