package hub

import (
	"strings"
	"testing"
	"time"
)

func TestFormatElapsed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d      time.Duration
		en, ja string
	}{
		{0, "0s", "0秒"},
		{-5 * time.Second, "0s", "0秒"},
		{999 * time.Millisecond, "0s", "0秒"},
		{45 * time.Second, "45s", "45秒"},
		{5 * time.Minute, "5m", "5分"},
		{3*time.Minute + 15*time.Second, "3m15s", "3分15秒"},
		{59*time.Minute + 59*time.Second, "59m59s", "59分59秒"},
		{time.Hour, "1h", "1時間"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1h2m3s", "1時間2分3秒"},
		{time.Hour + 3*time.Second, "1h0m3s", "1時間0分3秒"},
		{2*time.Hour + 30*time.Minute, "2h30m", "2時間30分"},
		{27 * time.Hour, "27h", "27時間"},
	}
	for _, tt := range tests {
		if got := FormatElapsed(tt.d, LocaleEN); got != tt.en {
			t.Errorf("FormatElapsed(%v, en) = %q, want %q", tt.d, got, tt.en)
		}
		if got := FormatElapsed(tt.d, LocaleJA); got != tt.ja {
			t.Errorf("FormatElapsed(%v, ja) = %q, want %q", tt.d, got, tt.ja)
		}
	}
}

func TestComputeElapsed(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 19, 14, 30, 0, 0, time.UTC)
	th := DefaultHealthConfig().Elapsed()
	tests := []struct {
		name      string
		d         time.Duration
		deepWork  bool
		loc       Locale
		level     ElapsedLevel
		formatted string
		warning   string // substring; "" means no message
	}{
		{"fresh", 0, false, LocaleEN, ElapsedNone, "0s", ""},
		{"future start clamps", -time.Minute, false, LocaleEN, ElapsedNone, "0s", ""},
		{"299s", 299 * time.Second, false, LocaleEN, ElapsedNone, "4m59s", ""},
		{"299.9s", 299*time.Second + 900*time.Millisecond, false, LocaleEN, ElapsedNone, "4m59s", ""},
		{"300s", 300 * time.Second, false, LocaleEN, ElapsedInfo, "5m", "5 minutes have passed since this heartbeat began"},
		{"450s", 450 * time.Second, false, LocaleEN, ElapsedInfo, "7m30s", "7 minutes have passed"},
		{"599s", 599 * time.Second, false, LocaleEN, ElapsedInfo, "9m59s", "9 minutes"},
		{"600s", 600 * time.Second, false, LocaleEN, ElapsedWarning, "10m", "small steps"},
		{"765s ja", 765 * time.Second, false, LocaleJA, ElapsedWarning, "12分45秒",
			"活動分割推奨: ハートビート開始から12分が経過しています。「小さな一歩」の原則に従い、活動を区切ることを推奨します。"},
		{"450s ja", 450 * time.Second, false, LocaleJA, ElapsedInfo, "7分30秒",
			"経過時間通知: ハートビート開始から7分が経過しています。"},
		{"195s ja", 195 * time.Second, false, LocaleJA, ElapsedNone, "3分15秒", ""},
		{"deep work early", 10 * time.Second, true, LocaleEN, ElapsedRelaxed, "10s", "Deep work declared: warnings relaxed"},
		{"deep work 920s ja", 920 * time.Second, true, LocaleJA, ElapsedRelaxed, "15分20秒", "宣言により警告が緩和されています"},
		{"deep work past warning", 2 * time.Hour, true, LocaleEN, ElapsedRelaxed, "2h", "warnings relaxed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ComputeElapsed(start, start.Add(tt.d), tt.deepWork, tt.loc, th)
			if got.Level != tt.level {
				t.Errorf("Level = %q, want %q", got.Level, tt.level)
			}
			if got.Formatted != tt.formatted {
				t.Errorf("Formatted = %q, want %q", got.Formatted, tt.formatted)
			}
			if wantSecs := max(int64(tt.d/time.Second), 0); got.Seconds != wantSecs {
				t.Errorf("Seconds = %d, want %d", got.Seconds, wantSecs)
			}
			if tt.warning == "" && got.Warning != "" {
				t.Errorf("Warning = %q, want none", got.Warning)
			}
			if !strings.Contains(got.Warning, tt.warning) {
				t.Errorf("Warning = %q, want it to contain %q", got.Warning, tt.warning)
			}
		})
	}
}
