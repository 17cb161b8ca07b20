package hub

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

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

var beatReadingTexts = map[string]map[string]string{
	"en": {
		BeatActiveFlow:         "active conversation, continuous flow",
		BeatShortPause:         "short pause (~15 min – 1 h)",
		BeatSessionInterrupted: "session interrupted (~1 h – 6 h)",
		BeatNewDay:             "new day (~6 h – 24 h)",
		BeatLongAbsence:        "long absence (> 24 h)",
	},
	"ja": {
		BeatActiveFlow:         "会話継続中（フロー状態）",
		BeatShortPause:         "短い休止（約15分〜1時間）",
		BeatSessionInterrupted: "セッション中断（約1〜6時間）",
		BeatNewDay:             "新しい一日（約6〜24時間）",
		BeatLongAbsence:        "長期不在（24時間超）",
	},
}

// BeatReadingText returns the human wording of a reading key in locale
// ("en" or "ja"; anything else falls back to "en"). An unknown key is
// returned unchanged.
func BeatReadingText(key, locale string) string {
	texts, ok := beatReadingTexts[locale]
	if !ok {
		texts = beatReadingTexts["en"]
	}
	if s, ok := texts[key]; ok {
		return s
	}
	return key
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

// NextBeatAt returns when the beat after the one at lastBeatAt is due.
func NextBeatAt(lastBeatAt time.Time, interval time.Duration) time.Time {
	return lastBeatAt.Add(interval)
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

// BeatsDuration returns the wall time that n beats of interval stand for,
// e.g. to print "2 beats (~10m)".
func BeatsDuration(n int64, interval time.Duration) time.Duration {
	return time.Duration(n) * interval
}

// Meta keys of the persisted beat state.
const (
	metaBeat         = "beat"
	metaBeatStarted  = "beat_started_at"
	metaBeatLast     = "beat_last_at"
	metaBeatInterval = "beat_interval"
)

// LoadBeatState reads the beat state from the store's meta values; ok is
// false when none was ever saved. interval is the beat period last saved.
func LoadBeatState(tx MetaTx) (s BeatState, interval time.Duration, ok bool, err error) {
	var vals [4]int64
	for i, k := range []string{metaBeat, metaBeatStarted, metaBeatLast, metaBeatInterval} {
		v, err := tx.Meta(k)
		if err != nil {
			return BeatState{}, 0, false, fmt.Errorf("load beat: %w", err)
		}
		if v == "" {
			if i == 0 {
				return BeatState{}, 0, false, nil
			}
			continue
		}
		if vals[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return BeatState{}, 0, false, fmt.Errorf("load beat: meta %s = %q: %w", k, v, err)
		}
	}
	s = BeatState{Beat: vals[0], StartedAt: unixNanos(vals[1]), LastBeatAt: unixNanos(vals[2])}
	return s, time.Duration(vals[3]), true, nil
}

// SaveBeatState writes the beat state and its period to the store's meta values.
func SaveBeatState(tx MetaTx, s BeatState, interval time.Duration) error {
	for _, kv := range [][2]string{
		{metaBeat, strconv.FormatInt(s.Beat, 10)},
		{metaBeatStarted, strconv.FormatInt(s.StartedAt.UnixNano(), 10)},
		{metaBeatLast, strconv.FormatInt(s.LastBeatAt.UnixNano(), 10)},
		{metaBeatInterval, strconv.FormatInt(int64(interval), 10)},
	} {
		if err := tx.SetMeta(kv[0], kv[1]); err != nil {
			return fmt.Errorf("save beat: %w", err)
		}
	}
	return nil
}

func unixNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// BeatAgent is one agent's view of the beat.
type BeatAgent struct {
	Agent               string
	LastInteractionBeat int64
	SinceLast           int64
	Reading             string
}

// BeatInfo is the global beat counter with every agent's since_last (seed
// 003's `ai heartbeat`).
type BeatInfo struct {
	BeatState
	Interval time.Duration
	Agents   []BeatAgent
}

// BeatInfo returns the beat state and, for each enabled agent, the beats
// since its last interaction.
func (s *Service) BeatInfo(ctx context.Context) (*BeatInfo, error) {
	info := &BeatInfo{}
	err := s.store.View(ctx, func(tx Tx) error {
		st, interval, _, err := LoadBeatState(tx)
		if err != nil {
			return err
		}
		st.Beat = max(st.Beat, s.Beat()) // the in-memory counter may be a tick ahead
		info.BeatState, info.Interval = st, interval
		as, err := tx.ListAgents(false)
		if err != nil {
			return err
		}
		for _, a := range as {
			_, b := s.presence.LastCall(a.ID)
			last := max(a.LastInteractionBeat, b)
			since := SinceLast(st.Beat, last)
			info.Agents = append(info.Agents, BeatAgent{Agent: a.Name, LastInteractionBeat: last, SinceLast: since, Reading: BeatReading(since)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}
