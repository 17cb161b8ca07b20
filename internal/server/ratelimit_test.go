package server

import (
	"testing"
	"time"
)

func TestRateLimiterBucket(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newRateLimiter(RateLimit{PerSecond: 10, Burst: 3}, func() time.Time { return now })

	for i := range 3 {
		if d := l.take(1); d != 0 {
			t.Fatalf("take %d within the burst: wait %v, want 0", i, d)
		}
	}
	if d := l.take(1); d != 100*time.Millisecond {
		t.Fatalf("take past the burst: wait %v, want 100ms", d)
	}
	if d := l.take(2); d != 0 {
		t.Fatalf("another agent's bucket is separate: wait %v, want 0", d)
	}
	now = now.Add(50 * time.Millisecond)
	if d := l.take(1); d != 50*time.Millisecond {
		t.Fatalf("half refilled: wait %v, want 50ms", d)
	}
	now = now.Add(50 * time.Millisecond)
	if d := l.take(1); d != 0 {
		t.Fatalf("refilled: wait %v, want 0", d)
	}
	now = now.Add(time.Hour)
	for i := range 3 {
		if d := l.take(1); d != 0 {
			t.Fatalf("after a long pause, take %d: wait %v, want 0 (the bucket holds at most the burst)", i, d)
		}
	}
	if d := l.take(1); d == 0 {
		t.Fatal("a long pause must not store more than the burst")
	}
}

func TestRateLimiterSweep(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	l := newRateLimiter(RateLimit{PerSecond: 100, Burst: 1}, func() time.Time { return now })
	for id := range int64(sweepAbove + 10) {
		l.take(id)
	}
	now = now.Add(2 * time.Minute)
	l.take(-1)
	if n := len(l.buckets); n != 1 {
		t.Fatalf("after a sweep %d buckets remain, want 1 (only the new one)", n)
	}
}

func TestWriteMethods(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"PostMessage", "Heartbeat", "CreateActivityLog", "Checkpoint", "MarkRead"} {
		if !isWriteMethod(agentServicePrefix + m) {
			t.Errorf("%s is not rate limited", m)
		}
	}
	for _, m := range []string{agentServicePrefix + "GetStatus", agentServicePrefix + "WaitForMessages", agentServicePrefix + "ListMessages", adminServicePrefix + "PostMessage"} {
		if isWriteMethod(m) {
			t.Errorf("%s is rate limited", m)
		}
	}
}
