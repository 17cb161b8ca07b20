package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// BenchmarkPatternsOverlapWorst decides the costliest pattern pairs found
// within the limits (worstPairs), each normalised as a request would be;
// the figure is one pair's decision. The last pair is the attack's (510
// stars in a segment against 510): the limits refuse it, and the benchmark
// says so, unless run on a hub without them.
//
//	go test ./internal/hub/ -run '^$' -bench PatternsOverlapWorst -count 5
func BenchmarkPatternsOverlapWorst(b *testing.B) {
	held, attack := starPatterns()
	for _, p := range append(worstPairs(), pair{"the attack: 510 stars against 510", held[0], attack}) {
		b.Run(p.name, func(b *testing.B) {
			na, err := hub.NormalizePattern(p.a)
			if err != nil {
				b.Skip(err)
			}
			nb, err := hub.NormalizePattern(p.b)
			if err != nil {
				b.Skip(err)
			}
			for b.Loop() {
				hub.PatternsOverlap(na, nb)
			}
		})
	}
}

// stormPatterns returns n distinct patterns of two 250-byte segments with
// ** around each, whose pieces fit almost everywhere in the other kind's
// letters (kind "held") and fail at their last character (kind "storm"):
// the costliest pairs within the limits, none of which overlaps.
func stormPatterns(kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		tag := fmt.Sprintf("%03d", i)
		seg := strings.Repeat("a", 247) + tag
		if kind == "storm" {
			seg = "*" + strings.Repeat("a", 121) + "b" + tag + "*"
		}
		out[i] = "**/" + seg + "/**/" + seg
	}
	return out
}

// holdStore records how long each write transaction's function ran: the
// time the writer is held by the call itself, queueing and commit aside.
type holdStore struct {
	hub.Store
	mu    sync.Mutex
	holds []time.Duration
}

func (s *holdStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error {
		start := time.Now()
		err := fn(tx)
		d := time.Since(start)
		s.mu.Lock()
		s.holds = append(s.holds, d)
		s.mu.Unlock()
		return err
	})
}

// BenchmarkHeartbeatDuringReservationStorm: alice holds ten shared
// patterns; four agents reserve 25 patterns each, one call after another,
// each pattern the costliest to match against alice's; meanwhile carol
// heartbeats every 5 ms for 3 s (one run per iteration). "quiet" is the
// same without the four agents: what the machine gives a heartbeat then. Reported: carol's
// heartbeat p50, p99 and max, the reservation calls' p50, the longest a
// write transaction's function held the writer, and the reservation calls
// made.
//
//	go test ./internal/hub/ -run '^$' -bench HeartbeatDuringReservationStorm -benchtime 1x -count 5
func BenchmarkHeartbeatDuringReservationStorm(b *testing.B) {
	for _, agents := range []int{0, 4} {
		name := "quiet"
		if agents > 0 {
			name = "storm"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				benchReservationStorm(b, agents, 3*time.Second)
			}
		})
	}
}

func benchReservationStorm(b *testing.B, agents int, window time.Duration) {
	b.StopTimer()
	h := newTestHub(b)
	ts := &holdStore{Store: h.DB}
	svc := h.over(b, ts)
	ctx := context.Background()
	as := h.agents(b, "alice", "carol", "m1", "m2", "m3", "m4")
	if _, _, err := svc.ReservePaths(ctx, as[0], hub.ReservationRequest{Patterns: stormPatterns("held", 10), Mode: hub.ReservationShared}); err != nil {
		b.Fatal(err)
	}
	storm, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var calls []time.Duration
	patterns := stormPatterns("storm", 100)
	for i, m := range as[2 : 2+agents] {
		wg.Go(func() {
			for storm.Err() == nil {
				start := time.Now()
				_, _, err := svc.ReservePaths(storm, m, hub.ReservationRequest{Patterns: patterns[25*i : 25*i+25], Mode: hub.ReservationShared})
				if err != nil && storm.Err() == nil {
					b.Error(err)
					return
				}
				mu.Lock()
				calls = append(calls, time.Since(start))
				mu.Unlock()
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the storm under way
	ts.mu.Lock()
	ts.holds = nil
	ts.mu.Unlock()
	b.StartTimer()
	var beats []time.Duration
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		start := time.Now()
		if _, err := svc.Heartbeat(ctx, as[1]); err != nil {
			b.Fatal(err)
		}
		beats = append(beats, time.Since(start))
	}
	b.StopTimer()
	stop()
	wg.Wait()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	slices.Sort(beats)
	slices.Sort(calls)
	b.ReportMetric(ms(beats[len(beats)/2]), "beat-p50-ms")
	b.ReportMetric(ms(beats[len(beats)*99/100]), "beat-p99-ms")
	b.ReportMetric(ms(beats[len(beats)-1]), "beat-max-ms")
	if len(calls) > 0 {
		b.ReportMetric(ms(calls[len(calls)/2]), "reserve-p50-ms")
	}
	b.ReportMetric(float64(len(calls)), "reserve-calls")

	ts.mu.Lock()
	b.ReportMetric(ms(slices.Max(ts.holds)), "max-hold-ms")
	ts.mu.Unlock()
}

// BenchmarkReservePathsTypical is the common case the storm's defences must
// not make much slower: 50 agents hold 4 reservations each (directories
// and globs), and one agent renews 3 patterns, one call after another.
// Besides the call's time, hold-µs is what its write transaction's
// function held the writer for, on average.
//
//	go test ./internal/hub/ -run '^$' -bench ReservePathsTypical -count 5
func BenchmarkReservePathsTypical(b *testing.B) {
	h := newTestHub(b)
	ts := &holdStore{Store: h.DB}
	svc := h.over(b, ts)
	ctx := context.Background()
	for i := range 50 {
		a := h.agents(b, fmt.Sprintf("agent-%02d", i))[0]
		d := fmt.Sprintf("pkg%02d", i)
		h.reserve(b, a, hub.ReservationShared, d+"/", d+"/**/*_test.go", "docs/"+d+".md", "cmd/"+d+"/*.go")
	}
	me := h.agents(b, "me")[0]
	req := hub.ReservationRequest{Patterns: []string{"pkg07/store.go", "internal/me/", "docs/*.md"}, Mode: hub.ReservationShared}
	ts.holds = nil
	for b.Loop() {
		if _, _, err := svc.ReservePaths(ctx, me, req); err != nil {
			b.Fatal(err)
		}
	}
	var sum time.Duration
	for _, d := range ts.holds {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(ts.holds)), "hold-µs")
}
