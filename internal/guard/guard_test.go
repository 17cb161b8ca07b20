package guard_test

import (
	"bytes"
	"context"
	"strings"
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

// TestCheckTakesTheStagedPathsGiven: paths handed to the check (hub-hook
// found them: --staged) are checked without asking git, here in a
// directory that is no repository; none given settles the check, and
// the guard turned off still wins.
func TestCheckTakesTheStagedPathsGiven(t *testing.T) {
	t.Parallel()
	getenv := func(off string) func(string) string {
		return func(k string) string {
			if k == "HUB_GUARD" {
				return off
			}
			return ""
		}
	}
	for _, c := range []struct {
		staged []string
		off    string
		warn   string
	}{
		{staged: []string{"a.go"}, warn: "no agent token"},
		{staged: []string{}},
		{staged: []string{"a.go"}, off: "off"},
		{staged: nil, warn: "git diff --cached"},
	} {
		var stderr bytes.Buffer
		ok := guard.Check(context.Background(), guard.Options{Dir: t.TempDir(), Staged: c.staged, Getenv: getenv(c.off)}, &stderr)
		if !ok || c.warn == "" && stderr.Len() != 0 || !strings.Contains(stderr.String(), c.warn) {
			t.Errorf("staged %q, HUB_GUARD=%q: allowed %v, stderr %q; want allowed, warning %q", c.staged, c.off, ok, stderr.String(), c.warn)
		}
	}
}
