package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestParseActiveHours(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // String() of the result
		wantErr string // substring of the error message
	}{
		{"", "", ""},
		{"09:00-18:00", "09:00-18:00", ""},
		{" 9-17 ", "09:00-17:00", ""},
		{"22:00-06:00", "22:00-06:00", ""},
		{"22:30-24:00", "22:30-24:00", ""},
		{"00:00-24:00", "", ""},
		{"0900-1800", "", "not a time of day"},
		{"9:00", "", "missing '-'"},
		{"25:00-06:00", "", "hour must be 00-23"},
		{"09:60-10:00", "", "minutes must be 00-59"},
		{"09:5-10:00", "", "two digits"},
		{"ab-10:00", "", "not a time of day"},
		{"24:00-06:00", "", "start cannot be 24:00"},
		{"08:00-08:00", "", "empty window"},
		{"-1-5", "", "not a time of day"},
	}
	for _, tt := range tests {
		w, err := hub.ParseActiveHours(tt.in)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("ParseActiveHours(%q) = %v, want error containing %q", tt.in, w, tt.wantErr)
				continue
			}
			if code := hub.ErrorCode(err); code != hub.EINVALID {
				t.Errorf("ParseActiveHours(%q) code = %q, want %q", tt.in, code, hub.EINVALID)
			}
			if msg := hub.ErrorMessage(err); !strings.Contains(msg, tt.wantErr) || !strings.Contains(msg, "HH:MM-HH:MM") {
				t.Errorf("ParseActiveHours(%q) message = %q, want it to contain %q and the format", tt.in, msg, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseActiveHours(%q): %v", tt.in, err)
			continue
		}
		if got := w.String(); got != tt.want {
			t.Errorf("ParseActiveHours(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestActiveHoursContains(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 2, 19, h, m, 0, 0, time.UTC) }
	tests := []struct {
		window string
		t      time.Time
		loc    *time.Location
		want   bool
	}{
		{"09:00-18:00", at(9, 0), time.UTC, true},
		{"09:00-18:00", at(8, 59), time.UTC, false},
		{"09:00-18:00", at(17, 59), time.UTC, true},
		{"09:00-18:00", at(18, 0), time.UTC, false},
		// wraps midnight
		{"22:00-06:00", at(23, 30), time.UTC, true},
		{"22:00-06:00", at(0, 0), time.UTC, true},
		{"22:00-06:00", at(5, 59), time.UTC, true},
		{"22:00-06:00", at(6, 0), time.UTC, false},
		{"22:00-06:00", at(12, 0), time.UTC, false},
		{"22:00-06:00", at(21, 59), time.UTC, false},
		{"22:00-24:00", at(23, 59), time.UTC, true},
		{"22:00-24:00", at(0, 0), time.UTC, false},
		// time zones: 01:00 UTC is 10:00 in Tokyo
		{"09:00-18:00", at(1, 0), tokyo, true},
		{"09:00-18:00", at(1, 0), time.UTC, false},
		{"22:00-06:00", at(14, 0), tokyo, true}, // 23:00 JST
		{"", at(3, 33), tokyo, true},
	}
	for _, tt := range tests {
		w, err := hub.ParseActiveHours(tt.window)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Contains(tt.t, tt.loc); got != tt.want {
			t.Errorf("%q.Contains(%v in %v) = %v, want %v", tt.window, tt.t, tt.loc, got, tt.want)
		}
	}
}

func TestPulseConfigValidate(t *testing.T) {
	t.Parallel()
	ok := hub.PulseConfig{Enabled: true, Interval: time.Minute, ActiveHours: "22:00-06:00", TimeZone: "UTC", Instructions: "check", OutputChannel: "#ops"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	tests := []struct {
		name    string
		mod     func(*hub.PulseConfig)
		wantErr string
	}{
		{"zero interval", func(c *hub.PulseConfig) { c.Interval = 0 }, "give 1m0s to 168h0m0s"},
		{"1 s interval", func(c *hub.PulseConfig) { c.Interval = time.Second }, "give 1m0s to 168h0m0s"},
		{"8 day interval", func(c *hub.PulseConfig) { c.Interval = 8 * 24 * time.Hour }, "out of range"},
		{"bad hours", func(c *hub.PulseConfig) { c.ActiveHours = "late" }, "active hours"},
		{"bad zone", func(c *hub.PulseConfig) { c.TimeZone = "Mars/Olympus" }, "time zone"},
		{"bad channel", func(c *hub.PulseConfig) { c.OutputChannel = "ops" }, "output channel"},
	}
	for _, tt := range tests {
		c := ok
		tt.mod(&c)
		err := c.Validate()
		if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), tt.wantErr) {
			t.Errorf("%s: err = %v, want EINVALID containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestShouldPulse(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)
	busy := time.Minute
	cfg := hub.PulseConfig{Enabled: true, Interval: 30 * time.Minute, ActiveHours: "09:00-18:00", Instructions: "Check reminders. Reply HEARTBEAT_OK if nothing to report."}
	state := hub.PulseState{LastPulseAt: now.Add(-31 * time.Minute)}
	lastCall := now.Add(-2 * time.Minute)

	// Each precondition blocks alone: start from a passing case and break one thing.
	tests := []struct {
		name       string
		mod        func(c *hub.PulseConfig, s *hub.PulseState, lastCall *time.Time)
		wantOK     bool
		wantReason string
	}{
		{"all pass", func(*hub.PulseConfig, *hub.PulseState, *time.Time) {}, true, hub.PulseReady},
		{"never pulsed", func(_ *hub.PulseConfig, s *hub.PulseState, _ *time.Time) { s.LastPulseAt = time.Time{} }, true, hub.PulseReady},
		{"never called", func(_ *hub.PulseConfig, _ *hub.PulseState, l *time.Time) { *l = time.Time{} }, true, hub.PulseReady},
		{"interval exactly elapsed", func(_ *hub.PulseConfig, s *hub.PulseState, _ *time.Time) { s.LastPulseAt = now.Add(-30 * time.Minute) }, true, hub.PulseReady},
		{"disabled", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) { c.Enabled = false }, false, hub.PulseDisabled},
		{"instructions empty", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) { c.Instructions = "" }, false, hub.PulseInstructionsEmpty},
		{"instructions blank", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) { c.Instructions = " \n\t" }, false, hub.PulseInstructionsEmpty},
		{"interval not elapsed", func(_ *hub.PulseConfig, s *hub.PulseState, _ *time.Time) { s.LastPulseAt = now.Add(-29 * time.Minute) }, false, hub.PulseIntervalNotElapsed},
		{"outside active hours", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) { c.ActiveHours = "11:00-18:00" }, false, hub.PulseOutsideActiveHours},
		{"outside wrapped hours", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) { c.ActiveHours = "22:00-06:00" }, false, hub.PulseOutsideActiveHours},
		{"inside hours in its zone", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) {
			c.ActiveHours, c.TimeZone = "18:00-20:00", "Asia/Tokyo" // 10:00 UTC = 19:00 JST
		}, true, hub.PulseReady},
		{"outside hours in its zone", func(c *hub.PulseConfig, _ *hub.PulseState, _ *time.Time) {
			c.TimeZone = "Asia/Tokyo" // 19:00 JST, outside 09-18
		}, false, hub.PulseOutsideActiveHours},
		{"unanswered", func(_ *hub.PulseConfig, s *hub.PulseState, _ *time.Time) { s.Unanswered = true }, false, hub.PulseUnanswered},
		{"agent busy", func(_ *hub.PulseConfig, _ *hub.PulseState, l *time.Time) { *l = now.Add(-59 * time.Second) }, false, hub.PulseAgentBusy},
		{"busy window just passed", func(_ *hub.PulseConfig, _ *hub.PulseState, l *time.Time) { *l = now.Add(-busy) }, true, hub.PulseReady},
	}
	for _, tt := range tests {
		c, s, l := cfg, state, lastCall
		tt.mod(&c, &s, &l)
		ok, reason := hub.ShouldPulse(c, s, l, now, busy, time.UTC)
		if ok != tt.wantOK || reason != tt.wantReason {
			t.Errorf("%s: ShouldPulse = %v, %q; want %v, %q", tt.name, ok, reason, tt.wantOK, tt.wantReason)
		}
	}
}

func TestShouldPulseHubZone(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	cfg := hub.PulseConfig{Enabled: true, Interval: time.Minute, ActiveHours: "09:00-18:00", Instructions: "x"}
	now := time.Date(2026, 2, 19, 1, 0, 0, 0, time.UTC) // 10:00 in Tokyo
	if ok, reason := hub.ShouldPulse(cfg, hub.PulseState{}, time.Time{}, now, time.Minute, tokyo); !ok {
		t.Errorf("hub zone Tokyo: not ok (%s), want ok", reason)
	}
	if ok, _ := hub.ShouldPulse(cfg, hub.PulseState{}, time.Time{}, now, time.Minute, time.UTC); ok {
		t.Errorf("hub zone UTC: ok at 01:00, want outside active hours")
	}
}

func TestPulseResponseOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, last, want string
	}{
		{"HEARTBEAT_OK", "", hub.PulseOutcomeOK},
		{"  HEARTBEAT_OK\n", "earlier report", hub.PulseOutcomeOK},
		{"HEARTBEAT_OK.", "", hub.PulseOutcomeOK},
		{"", "", hub.PulseOutcomeOK},
		{"2 reminders are due", "", hub.PulseOutcomePosted},
		{"2 reminders are due", "2 reminders are due", hub.PulseOutcomeDuplicate},
		{"  2 reminders are due \n", "2 reminders are due", hub.PulseOutcomeDuplicate},
		{"2 reminders are due HEARTBEAT_OK", "2 reminders are due", hub.PulseOutcomeDuplicate},
		{"HEARTBEAT_OK: 3 reminders are due", "2 reminders are due", hub.PulseOutcomePosted},
		{"heartbeat_ok", "", hub.PulseOutcomePosted}, // the token is case-sensitive
	}
	for _, tt := range tests {
		if got := hub.PulseResponseOutcome(tt.text, tt.last); got != tt.want {
			t.Errorf("PulseResponseOutcome(%q, %q) = %q, want %q", tt.text, tt.last, got, tt.want)
		}
	}
	if got, want := hub.PulseMeaningfulText("HEARTBEAT_OK: 3 reminders"), "3 reminders"; got != want {
		t.Errorf("PulseMeaningfulText = %q, want %q", got, want)
	}
}

func TestDefaultPulseChannel(t *testing.T) {
	t.Parallel()
	if got, want := hub.DefaultPulseChannel("gemini"), "#gemini-heartbeat"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
