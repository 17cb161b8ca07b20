package hub

import "time"

// HeartbeatIDLayout is the time layout of a heartbeat ID: 14 digits,
// YYYYMMDDHHMMSS, in the hub's time zone.
const HeartbeatIDLayout = "20060102150405"

// FormatHeartbeatID returns the heartbeat ID naming instant t in zone loc
// (nil means UTC).
func FormatHeartbeatID(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(HeartbeatIDLayout)
}

// ParseHeartbeatID returns the instant named by heartbeat ID s, read in zone
// loc (nil means UTC). It returns EINVALID naming the expected format when s
// is not 14 digits forming a valid date and time, and EINVALID saying how far
// in the future the ID lies when it names an instant after now (compared at
// whole seconds, the ID's resolution).
func ParseHeartbeatID(s string, loc *time.Location, now time.Time) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	if len(s) != len(HeartbeatIDLayout) || !allDigits(s) {
		return time.Time{}, Errorf(EINVALID,
			"heartbeat ID %q is malformed: expected 14 digits in the format YYYYMMDDHHMMSS, e.g. %s",
			s, FormatHeartbeatID(now, loc))
	}
	t, err := time.ParseInLocation(HeartbeatIDLayout, s, loc)
	if err != nil {
		return time.Time{}, Errorf(EINVALID,
			"heartbeat ID %q is not a valid date and time: expected the format YYYYMMDDHHMMSS, e.g. %s",
			s, FormatHeartbeatID(now, loc))
	}
	if ahead := t.Sub(now.Truncate(time.Second)); ahead > 0 {
		return time.Time{}, Errorf(EINVALID,
			"heartbeat ID %s is %s in the future: use the current heartbeat ID or an earlier one (now is %s)",
			s, FormatElapsed(ahead, LocaleEN), FormatHeartbeatID(now, loc))
	}
	return t, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
