package hub

import "time"

// DefaultBeatInterval is how often the global beat counter advances unless
// the hub is configured otherwise (seed 003: HEARTBEAT_INTERVAL = 300).
const DefaultBeatInterval = 5 * time.Minute

// Beat readings: machine keys for the meaning of since_last, the number of
// beats since an agent's last interaction (seed 003's thresholds, calibrated
// for 5-minute beats).
const (
	BeatActiveFlow         = "active_flow"         // 0–2 beats: conversation active, continuous flow
	BeatShortPause         = "short_pause"         // 3–12 beats: ~15 min – 1 h
	BeatSessionInterrupted = "session_interrupted" // 13–72 beats: ~1 h – 6 h
	BeatNewDay             = "new_day"             // 73–288 beats: ~6 h – 24 h
	BeatLongAbsence        = "long_absence"        // 289+ beats: more than 24 h
)

// BeatReading returns the machine key reading of sinceLast, the number of
// beats since an agent's last interaction. A negative value (a clock or
// counter oddity) reads as active flow.
func BeatReading(sinceLast int64) string {
	switch {
	case sinceLast <= 2:
		return BeatActiveFlow
	case sinceLast <= 12:
		return BeatShortPause
	case sinceLast <= 72:
		return BeatSessionInterrupted
	case sinceLast <= 288:
		return BeatNewDay
	default:
		return BeatLongAbsence
	}
}

// BeatState is the persisted global beat counter (seed 003's heartbeat.json).
type BeatState struct {
	Beat       int64     // beats since the hub first started
	StartedAt  time.Time // when beat 0 was set
	LastBeatAt time.Time // when Beat last advanced (or StartedAt)
}

// NewBeatState returns the state of a hub starting its beat counter at now.
func NewBeatState(now time.Time) BeatState {
	return BeatState{Beat: 0, StartedAt: now, LastBeatAt: now}
}

// BeatsDue returns how many beats are due at now when the last beat was at
// lastBeatAt and beats come every interval: the number of whole intervals
// elapsed. It is 0 when interval is not positive, lastBeatAt is zero or now
// is not after it.
func BeatsDue(lastBeatAt time.Time, interval time.Duration, now time.Time) int64 {
	if interval <= 0 || lastBeatAt.IsZero() || !now.After(lastBeatAt) {
		return 0
	}
	return int64(now.Sub(lastBeatAt) / interval)
}

// AdvanceBeats returns s moved forward by every beat due at now and how many
// beats that was. Beats missed while the hub was down are counted, so that
// since_last keeps meaning elapsed time across a restart, and LastBeatAt
// stays aligned on the interval grid (it moves by whole intervals, never to
// now), so beat times do not drift with tick jitter.
func AdvanceBeats(s BeatState, interval time.Duration, now time.Time) (BeatState, int64) {
	n := BeatsDue(s.LastBeatAt, interval, now)
	if n == 0 {
		return s, 0
	}
	s.Beat += n
	s.LastBeatAt = s.LastBeatAt.Add(time.Duration(n) * interval)
	return s, n
}

// SinceLast returns the beats elapsed between an agent's last interaction
// beat and the current beat, never negative.
func SinceLast(beat, lastInteractionBeat int64) int64 {
	if d := beat - lastInteractionBeat; d > 0 {
		return d
	}
	return 0
}
