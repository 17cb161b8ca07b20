package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, floor uint64
		base, want  int
	}{
		{live: 4 * mib, floor: 16 * mib, base: 100, want: 400},
		{live: 5 * mib, floor: 16 * mib, base: 100, want: 320},
		{live: 3 * mib, floor: 16 * mib, base: 100, want: 534}, // rounded up: at least the floor
		{live: 16 * mib, floor: 16 * mib, base: 100, want: 100},
		{live: 1 << 30, floor: 16 * mib, base: 100, want: 100},
		{live: 4 * mib, floor: 16 * mib, base: 800, want: 800}, // base already allows more
		{live: 0, floor: 16 * mib, base: 100, want: 100},       // nothing measured yet
	}
	for _, tt := range tests {
		if got := percentFor(tt.live, tt.floor, tt.base); got != tt.want {
			t.Errorf("percentFor(%d, %d, %d) = %d, want %d", tt.live, tt.floor, tt.base, got, tt.want)
		}
	}
}

// TestStartFollowsTheLiveHeap checks the floor in this process: raised
// while the live heap is small, back to the base percentage once it is
// large.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	Start(64 << 20)

	awaitPercent := func(ok func(int) bool, what string) int {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			runtime.GC() // the cleanup runs after a cycle
			p := gogc()
			if ok(p) {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("GC percent %d, want %s", p, what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	awaitPercent(func(p int) bool { return p > 100 }, "above 100 with a small live heap")

	live := make([][]byte, 128) // 128 MiB live: twice the floor
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	awaitPercent(func(p int) bool { return p == 100 }, "100 with 128 MiB live")
	runtime.KeepAlive(live)
}

func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
