package hub

import (
	"testing"
	"time"
)

// A read of the store begun before the listener (re)connected, or before
// it lost its connection, may predate a change that nobody reported: what
// it read is not cached, though it ends while the cache is trusted.
func TestAuthCacheDropsReadsBegunBeforeReportsChanged(t *testing.T) {
	t.Parallel()
	c := &authCache{clock: NewFakeClock(time.Unix(1_700_000_000, 0)), off: true, leased: true}
	a := &Agent{ID: 1, Name: "reader"}
	for _, on := range []bool{true, false, true} {
		gen := c.generation()
		c.reported(on)
		c.put([]byte("h"), a, gen)
		if c.has([]byte("h")) {
			t.Fatalf("a read begun before reported(%v) was cached", on)
		}
	}
	c.put([]byte("h"), a, c.generation())
	if !c.has([]byte("h")) {
		t.Fatal("a read begun while reported was not cached")
	}
	c.reported(false)
	c.put([]byte("h"), a, c.generation())
	if c.has([]byte("h")) {
		t.Fatal("a read was cached while changes may be missed")
	}
}
