package hub_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agenthub/hub/internal/hub"
)

// refCovers decides by brute force whether the patterns together match
// every top-level name (and so every path): it tries every name of 1 to
// longest+1 characters over the patterns' own characters and one they do
// not hold. A name the patterns miss, if any, is among those: one spelled
// in the fresh character alone, its length at most one past the longest
// pattern. It reports false for ok when the names would be too many.
func refCovers(patterns []string) (covers, ok bool) {
	letters := map[rune]bool{}
	longest := 0
	for _, p := range patterns {
		for _, seg := range strings.Split(p, "/") {
			longest = max(longest, utf8.RuneCountInString(seg))
			for _, c := range seg {
				if c != '*' && c != '?' {
					letters[c] = true
				}
			}
		}
	}
	alphabet := []rune{'z'}
	for letters[alphabet[0]] {
		alphabet[0]++
	}
	for c := range letters {
		alphabet = append(alphabet, c)
	}
	total, n := 0, 1
	for l := 1; l <= longest+1; l++ {
		if n *= len(alphabet); n > 20000 {
			return false, false
		}
		total += n
	}
	var name []rune
	var walk func(l int) bool // every name of length l extending name is covered
	walk = func(l int) bool {
		if len(name) == l {
			for _, p := range patterns {
				if refMatch(p, string(name)) {
					return true
				}
			}
			return false
		}
		for _, c := range alphabet {
			name = append(name, c)
			ok := walk(l)
			name = name[:len(name)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	for l := 1; l <= longest+1; l++ {
		if !walk(l) {
			return false, true
		}
	}
	return true, true
}

// Whether a set of patterns covers the whole project, against the brute
// force: sets that cover only together, sets that leave one length or one
// name out, and patterns that match no top-level name.
func TestCoversProjectDecidesTheSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		patterns []string
		want     bool
	}{
		{[]string{"**"}, true},
		{[]string{"*"}, true},
		{[]string{"?*"}, true},
		{[]string{"*?"}, true},
		{[]string{"**/*/**"}, true},
		{[]string{"?", "??*"}, true},
		{[]string{"??*", "?"}, true},
		{[]string{"?", "??", "???*"}, true},
		{[]string{"?", "**/??", "???*/**"}, true},
		{[]string{"?", "??", "????*"}, false}, // three characters left out
		{[]string{"??*"}, false},
		{[]string{"?", "??"}, false},
		{[]string{"a*", "?", "??*"}, true},
		{[]string{"?", "a?*", "??*b"}, false},
		{[]string{"?", "*?/x"}, false}, // two segments: a top-level file is left out
		{[]string{"*/**/*"}, false},
		{[]string{"src/**", "?", "??*"}, true},
		{[]string{"*.go", "*.md"}, false},
		{[]string{"?", "?a*", "?b*", "??*?"}, false}, // "zz" is left out
	} {
		got := hub.CoversProject(tc.patterns...)
		ref, ok := refCovers(tc.patterns)
		if !ok {
			t.Fatalf("%q: too many names for the brute force", tc.patterns)
		}
		if got != tc.want || ref != tc.want {
			t.Errorf("CoversProject(%q) = %v, brute force %v, want %v", tc.patterns, got, ref, tc.want)
		}
	}
}

// FuzzCoversProject checks coversProject against the brute force on sets
// of up to six normalised patterns.
func FuzzCoversProject(f *testing.F) {
	for _, s := range []string{"?,??*", "?,??,???*", "a*,?", "**/?,**/??*/x", "*?/**", "?,a?*,??*b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ps []string
		for _, p := range strings.Split(s, ",") {
			n, err := hub.NormalizePattern(p)
			if err != nil {
				return
			}
			ps = append(ps, n)
		}
		if len(ps) > 6 {
			return
		}
		ref, ok := refCovers(ps)
		if !ok {
			return
		}
		if got := hub.CoversProject(ps...); got != ref {
			t.Fatalf("CoversProject(%q) = %v, brute force %v", ps, got, ref)
		}
	})
}

// An exclusive set that covers the project only together is the admin's,
// whether asked in one call, built up over several calls, or carried by
// a task's paths; and a reservation's reply names the holder's project.
func TestWholeProjectExclusiveBySet(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	as := h.agents(t, "alice", "bob")
	alice, bob := as[0], as[1]
	_, _, err := h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"?", "??*"}, TTL: hub.MaxReservationTTL})
	wantCode(t, `exclusive ["?", "??*"]`, err, hub.EPERMISSION)

	h.reserve(t, alice, hub.ReservationExclusive, "?")
	_, _, err = h.ReservePaths(ctx, alice, hub.ReservationRequest{Patterns: []string{"??*"}})
	wantCode(t, `exclusive "??*" over a held "?"`, err, hub.EPERMISSION)
	if err != nil && !strings.Contains(err.Error(), `with the exclusive reservations you hold ("?")`) {
		t.Errorf("refusal = %q, want it to name the held pattern", err)
	}
	h.reserve(t, alice, hub.ReservationShared, "??*") // shared: others may still reserve
	h.reserve(t, bob, hub.ReservationExclusive, "src/")

	// The admin may give the whole project; its holder reserves more.
	if _, err := h.ReleasePaths(ctx, alice, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReleasePaths(ctx, bob, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.ReservePathsFor(ctx, "alice", hub.ReservationRequest{Patterns: []string{"?", "??*"}}); err != nil {
		t.Fatalf("the admin reserves [?, ??*] for alice: %v", err)
	}
	h.reserve(t, alice, hub.ReservationExclusive, "src/x.go")

	_, err = h.Tasks.Create(ctx, alice, "", hub.TaskSpec{Title: "all of it", Paths: []string{"?", "??*"}})
	wantCode(t, `a task with paths ["?", "??*"]`, err, hub.EINVALID)
	if _, err := h.Tasks.Create(ctx, alice, "", hub.TaskSpec{Title: "some", Paths: []string{"?", "??"}}); err != nil {
		t.Errorf("a task with paths [?, ??]: %v", err)
	}
}

// The reply to a reservation names the holder's project, as the list does.
func TestReservationReplyNamesTheProject(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	ctx := context.Background()
	if _, err := h.CreateProject(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	_, token, err := h.CreateAgent(ctx, hub.CreateAgentRequest{Name: "carol", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	carol := h.auth(t, token)
	rs, _ := h.reserve(t, carol, hub.ReservationExclusive, "src/")
	if len(rs) != 1 || rs[0].Project != "web" {
		t.Fatalf("reserve = %+v, want one reservation of project web", rs)
	}
	rs, _ = h.reserve(t, carol, hub.ReservationShared, "src/") // a renewal
	if len(rs) != 1 || rs[0].Project != "web" {
		t.Fatalf("renewed in place = %+v, want project web", rs)
	}
}
