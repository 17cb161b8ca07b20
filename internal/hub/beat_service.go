package hub

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Meta keys of the persisted beat state.
const (
	metaBeat         = "beat"
	metaBeatStarted  = "beat_started_at"
	metaBeatLast     = "beat_last_at"
	metaBeatInterval = "beat_interval"
)

// loadBeatState reads the beat state from the store's meta values; ok is
// false when none was ever saved. interval is the beat period last saved.
func loadBeatState(tx MetaTx) (s BeatState, interval time.Duration, ok bool, err error) {
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

// saveBeatState writes the beat state and its period to the store's meta values.
func saveBeatState(tx MetaTx, s BeatState, interval time.Duration) error {
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
func (s *Schedule) BeatInfo(ctx context.Context) (*BeatInfo, error) {
	info := &BeatInfo{}
	err := view(ctx, s.store, func(tx scheduleTx) error {
		st, interval, _, err := loadBeatState(tx)
		if err != nil {
			return err
		}
		st.Beat = max(st.Beat, s.beat.Load()) // the in-memory counter may be a tick ahead
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

// LoadBeat sets the in-memory beat counter from the store (at start-up, so
// that calls made before the first tick read the right beat).
func (s *Schedule) LoadBeat(ctx context.Context) error {
	return view(ctx, s.store, func(tx scheduleTx) error {
		st, _, ok, err := loadBeatState(tx)
		if ok {
			s.setBeat(max(s.beat.Load(), st.Beat))
		}
		return err
	})
}

// AdvanceBeat moves the global beat counter forward by the beats due at
// now, persists it and returns the state and how many beats passed. The
// first call on a new hub starts the counter at 0.
func (s *Schedule) AdvanceBeat(ctx context.Context, now time.Time, interval time.Duration) (BeatState, int64, error) {
	if interval <= 0 {
		return BeatState{}, 0, Errorf(EINVALID, "beat interval %s must be positive", interval)
	}
	var st BeatState
	var saved time.Duration
	var ok bool
	err := view(ctx, s.store, func(tx scheduleTx) (err error) {
		st, saved, ok, err = loadBeatState(tx)
		return err
	})
	if err != nil {
		return BeatState{}, 0, err
	}
	old := "" // the stored counter, for the compare-and-set below
	if ok {
		old = strconv.FormatInt(st.Beat, 10)
	} else {
		st = NewBeatState(now)
	}
	st, n := AdvanceBeats(st, interval, now)
	if ok && n == 0 && saved == interval {
		s.setBeat(max(s.beat.Load(), st.Beat))
		return st, 0, nil
	}
	// The counter moves by compare-and-set on the value read: if another
	// orchestrator (a stale leader, after a fail-over) moved it meanwhile,
	// those beats are counted already, and this one adopts the stored state.
	var swapped bool
	err = update(ctx, s.store, func(tx scheduleTx) (err error) {
		if swapped, err = tx.SwapMeta(metaBeat, old, strconv.FormatInt(st.Beat, 10)); err != nil || !swapped {
			return err
		}
		return saveBeatState(tx, st, interval)
	})
	if err != nil {
		return BeatState{}, 0, err
	}
	if !swapped {
		err = view(ctx, s.store, func(tx scheduleTx) (err error) {
			st, _, _, err = loadBeatState(tx)
			return err
		})
		if err != nil {
			return BeatState{}, 0, err
		}
		s.setBeat(max(s.beat.Load(), st.Beat))
		return st, 0, nil
	}
	s.setBeat(st.Beat)
	return st, n, nil
}
