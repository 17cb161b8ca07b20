package guard_test

import (
	"strings"
	"testing"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/guard"
)

// A reservation of `**/*/` sixty times (as the hub stored it before
// patterns were bounded, or as a hub of another version sends it) against
// a deep staged path: matching is polynomial, so the hook answers at once.
// The watchdog only turns a hang into a failure; it measures nothing.
func TestBlockingDeepGlobAnswers(t *testing.T) {
	t.Parallel()
	pattern := strings.TrimSuffix(strings.Repeat("**/*/", 60), "/")
	rs := []*hubv1.Reservation{{Agent: "mallory", Pattern: pattern, Mode: "exclusive"}}
	shallow := strings.TrimSuffix(strings.Repeat("d/", 59), "/") // one segment short of sixty
	deep := strings.TrimSuffix(strings.Repeat("d/", 80), "/")
	done := make(chan []guard.Blocked, 1)
	go func() { done <- guard.Blocking([]string{shallow, deep}, rs, "alice") }()
	select {
	case got := <-done:
		if len(got) != 1 || got[0].Path != deep {
			t.Errorf("Blocking = %+v, want only the 80-segment path blocked", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Blocking did not answer within 30 s: matching backtracks exponentially")
	}
}
