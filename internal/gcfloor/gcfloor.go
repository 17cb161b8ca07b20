// Package gcfloor gives the garbage collector a floor: after each cycle
// the heap may grow by at least a set number of bytes before the next one.
//
// Go collects when the heap has grown by GOGC percent of what the last
// cycle found live (at least 4 MiB). A small live heap that serves many
// requests, each leaving garbage behind, is then collected very often,
// and most of each cycle's cost is fixed. Raising GOGC would make the
// heap grow in proportion to what is live, large heaps too; the floor
// adds at most a constant: once the live heap is large, GOGC decides
// alone.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Hub is the floor of `hub serve` when GOGC is not set (and of the
// orchestrator tick hubbench runs in process, to measure it as the hub
// runs it). A hub serving MCP keeps a few MiB live and each tool call
// leaves about 180 KiB behind (mostly the MCP SDK's decoding buffers): at
// Go's default it collected every 20–30 calls, a fifth of its CPU. The
// floor costs at most its size in memory, whatever the number of agents
// and parked waits; a hub whose live heap is above it collects as before
// (BENCHMARKS.md, "MCP").
const Hub = 16 << 20

var once sync.Once

// Start keeps the floor for the rest of the process: after each cycle the
// collector's percentage is set so that the heap may grow by floor bytes,
// or by the percentage in force when Start was called if that is more.
// Only the first call of a process counts.
func Start(floor uint64) {
	once.Do(func() {
		base := debug.SetGCPercent(100)
		debug.SetGCPercent(base)
		if base <= 0 {
			return // GOGC=off: the collector runs on the memory limit alone
		}
		t := &tuner{floor: floor, base: base, percent: base,
			sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		t.tune()
		t.arm()
	})
}

type tuner struct {
	floor   uint64
	base    int // the percentage without the floor
	percent int // the percentage set
	sample  []metrics.Sample
}

// sentinel is an object nothing refers to: its cleanup runs after the
// cycle that finds it unreachable, so once after every cycle. It is large
// enough not to share a tiny-allocator block, whose objects are freed
// together.
type sentinel struct{ _ [16]byte }

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(*tuner) {
		t.tune()
		t.arm()
	}, t)
}

// tune sets the percentage for the live heap the last cycle found.
func (t *tuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := percentFor(t.sample[0].Value.Uint64(), t.floor, t.base)
	if p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// percentFor is the percentage that lets a heap of live bytes grow by
// floor bytes, or by base percent if that is more.
func percentFor(live, floor uint64, base int) int {
	if live == 0 || live*uint64(base)/100 >= floor {
		return base
	}
	return int((floor*100 + live - 1) / live)
}
