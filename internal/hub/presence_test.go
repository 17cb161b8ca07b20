package hub

import (
	"slices"
	"testing"
	"time"
)

// TestPresenceFlushReturnsEachChangedEntryOnce: a flush returns the agents
// touched since the last one, each once with its latest call and beat; a
// failed flush given back (Unflush) is returned again; a forgotten agent
// touched again is returned once.
func TestPresenceFlushReturnsEachChangedEntryOnce(t *testing.T) {
	t0 := time.Date(2026, 2, 19, 10, 0, 0, 0, time.UTC)
	p := NewPresenceTracker()
	p.Seed(&Agent{ID: 9, Name: "a9", LastSeenAt: t0.Add(-time.Hour), LastInteractionBeat: 1}) // loaded, not changed
	p.Touch(&Agent{ID: 1}, t0, 3)
	p.Touch(&Agent{ID: 2}, t0, 3)
	p.Touch(&Agent{ID: 1}, t0.Add(time.Second), 4)
	if call, beat := p.Touch(&Agent{ID: 1}, t0, 2); !call.Equal(t0.Add(time.Second)) || beat != 4 { // an older call moves nothing back
		t.Errorf("Touch returned the call before it at %v, beat %d; want %v, 4", call, beat, t0.Add(time.Second))
	}
	if call, beat := p.Touch(&Agent{ID: 9, Name: "a9"}, t0, 5); !call.Equal(t0.Add(-time.Hour)) || beat != 1 {
		t.Errorf("Touch of a seeded agent returned %v, beat %d; want its seed, %v, 1", call, beat, t0.Add(-time.Hour))
	}
	byAgent := func(ts []Touch) []Touch {
		return slices.SortedFunc(slices.Values(ts), func(a, b Touch) int { return int(a.AgentID - b.AgentID) })
	}
	want := []Touch{{1, t0.Add(time.Second), 4, time.Time{}}, {2, t0, 3, time.Time{}}, {9, t0, 5, time.Time{}}}
	got := byAgent(p.Flush())
	if !slices.Equal(got, want) {
		t.Fatalf("first flush = %v, want %v", got, want)
	}
	if got := p.Flush(); len(got) != 0 {
		t.Fatalf("flush with nothing touched = %v, want none", got)
	}

	p.Unflush(want)
	p.Touch(&Agent{ID: 2}, t0.Add(2*time.Second), 5) // touched again after the failed flush
	want[1] = Touch{2, t0.Add(2 * time.Second), 5, time.Time{}}
	if got := byAgent(p.Flush()); !slices.Equal(got, want) {
		t.Fatalf("flush after Unflush = %v, want %v", got, want)
	}

	p.Touch(&Agent{ID: 3}, t0, 6)
	p.Forget(3)
	p.Touch(&Agent{ID: 3}, t0.Add(time.Second), 7)
	p.Forget(2)
	want = []Touch{{3, t0.Add(time.Second), 7, time.Time{}}}
	if got := p.Flush(); !slices.Equal(got, want) {
		t.Fatalf("flush after Forget = %v, want %v", got, want)
	}
	if got := p.Flush(); len(got) != 0 {
		t.Fatalf("last flush = %v, want none", got)
	}
}
