package server

import (
	"testing"
	"time"
)

// A flood of refusals writes a burst, then the steady rate; the rest is
// counted, and the next line written says how many were left out.
func TestLogSampler(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := NewLogSampler(5, 10, func() time.Time { return now })
	written := 0
	for range 1000 {
		if ok, _ := s.Allow(); ok {
			written++
		}
	}
	if written != 10 || s.Dropped() != 990 {
		t.Fatalf("1000 lines at once: %d written, %d dropped; want 10 and 990", written, s.Dropped())
	}
	now = now.Add(time.Second)
	written = 0
	var said int64
	for range 1000 {
		if ok, dropped := s.Allow(); ok {
			if written == 0 {
				said = dropped
			}
			written++
		}
	}
	if written != 5 || said != 990 {
		t.Errorf("a second later: %d written (want 5), first one reports %d dropped before (want 990)", written, said)
	}
	if got := s.Dropped(); got != 990+995 {
		t.Errorf("dropped = %d, want %d", got, 990+995)
	}
}
