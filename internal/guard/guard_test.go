package guard_test

import (
	"testing"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/guard"
)

func TestBlocking(t *testing.T) {
	t.Parallel()
	rs := []*hubv1.Reservation{
		{Agent: "alice", Pattern: "internal/hub", Mode: "exclusive"},
		{Agent: "carol", Pattern: "docs", Mode: "shared"},
		{Agent: "bob", Pattern: "cmd", Mode: "exclusive"},
		{Agent: "dave", Pattern: "**/*_test.go", Mode: "exclusive"},
	}
	paths := []string{"internal/hub/store.go", "docs/a.md", "cmd/hub/main.go", "README.md", "x/y_test.go", "Internal/hub/a.go"}
	got := guard.Blocking(paths, rs, "bob")
	want := map[string]string{"internal/hub/store.go": "alice", "x/y_test.go": "dave"}
	if len(got) != len(want) {
		t.Fatalf("Blocking = %+v, want %v (shared, own and case-different paths never block)", got, want)
	}
	for _, b := range got {
		if want[b.Path] != b.Reservation.GetAgent() {
			t.Errorf("%s blocked by %s, want %q", b.Path, b.Reservation.GetAgent(), want[b.Path])
		}
	}
}
