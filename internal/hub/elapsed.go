package hub

import (
	"strconv"
	"strings"
	"time"
)

// FormatElapsed formats d, truncated to whole seconds (negative counts as
// zero), the way the seeds do: ja "45秒", "5分", "3分15秒", "1時間2分3秒";
// en "45s", "5m", "3m15s", "1h2m3s". It writes the largest non-zero unit and
// every smaller one down to the smallest non-zero unit, so one hour and three
// seconds is "1h0m3s" / "1時間0分3秒", and zero is "0s" / "0秒".
func FormatElapsed(d time.Duration, loc Locale) string {
	secs := int64(d / time.Second)
	if secs < 0 {
		secs = 0
	}
	units := [3]string{"h", "m", "s"}
	if loc == LocaleJA {
		units = [3]string{"時間", "分", "秒"}
	}
	parts := [3]int64{secs / 3600, secs / 60 % 60, secs % 60}
	first, last := -1, -1
	for i, v := range parts {
		if v != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return "0" + units[2]
	}
	var b strings.Builder
	for i := first; i <= last; i++ {
		b.WriteString(strconv.FormatInt(parts[i], 10))
		b.WriteString(units[i])
	}
	return b.String()
}

// ElapsedLevel grades an elapsed time since a heartbeat began.
type ElapsedLevel string

// Elapsed levels.
const (
	ElapsedNone    ElapsedLevel = "none"    // below the info threshold: no message
	ElapsedInfo    ElapsedLevel = "info"    // past the info threshold
	ElapsedWarning ElapsedLevel = "warning" // past the warning threshold: split the activity
	ElapsedRelaxed ElapsedLevel = "relaxed" // deep work is active: warnings relaxed
)

// ElapsedThresholds are the two limits of the elapsed-time messages
// (defaults 300 s and 600 s, SPEC §3).
type ElapsedThresholds struct {
	Info    time.Duration
	Warning time.Duration
}

// Elapsed is the time since the agent's current heartbeat ID began: read
// alone (Liveness.HeartbeatElapsed) and as part of activity logs and checkpoints.
type Elapsed struct {
	Seconds   int64        // whole seconds since the start, never negative
	Formatted string       // Seconds formatted by FormatElapsed
	Warning   string       // the message for Level; empty for ElapsedNone
	Level     ElapsedLevel // how Warning was chosen
}

// ComputeElapsed returns the elapsed time from start to now and its message
// (SPEC §3): none below th.Info, info from th.Info, the "split the activity"
// warning from th.Warning; while deep work is active the message is always
// the "warnings relaxed" note instead (as the seed does, so the agent sees
// its declaration is in force).
func ComputeElapsed(start, now time.Time, deepWorkActive bool, loc Locale, th ElapsedThresholds) Elapsed {
	d := now.Sub(start)
	if d < 0 {
		d = 0
	}
	secs := int64(d / time.Second)
	e := Elapsed{Seconds: secs, Formatted: FormatElapsed(d, loc), Level: ElapsedNone}
	whole := time.Duration(secs) * time.Second
	switch {
	case deepWorkActive:
		e.Level, e.Warning = ElapsedRelaxed, loc.Text(MsgElapsedRelaxed)
	case whole >= th.Warning:
		e.Level, e.Warning = ElapsedWarning, loc.Text(MsgElapsedWarning, secs/60)
	case whole >= th.Info:
		e.Level, e.Warning = ElapsedInfo, loc.Text(MsgElapsedInfo, secs/60)
	}
	return e
}
