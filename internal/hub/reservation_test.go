package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

func TestNormalizePattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		refused  string // a word of the error, when refused
	}{
		{in: "src/", want: "src"},
		{in: "./src//hub/", want: "src/hub"},
		{in: "src/**/**/x.go", want: "src/**/x.go"},
		{in: ".", want: "**"},
		{in: "**", want: "**"},
		{in: "Src/A.go", want: "Src/A.go"},
		{in: "", refused: "empty"},
		{in: "   ", refused: "empty"},
		{in: "/etc/passwd", refused: "absolute"},
		{in: "C:/x", refused: "absolute"},
		{in: "../other", refused: ".."},
		{in: "src/../../x", refused: ".."},
		{in: `src\x.go`, refused: "backslash"},
		{in: "src/[ab].go", refused: "bracket"},
		{in: "src/a**b", refused: "inside a segment"},
		{in: "a\xffb", refused: "UTF-8"},
		{in: "src/\x1b]52;c;eA==\x07x", refused: "control character U+001B"},
		{in: "src\n/x", refused: "control character U+000A"},
		// The limits that bound matching, each named with the value.
		{in: "src/*a*b*c*d.go", want: "src/*a*b*c*d.go"},
		{in: "src/*a*b*c*d*.go", refused: "segment 2 holds 5 stars; the limit is 4 per segment"},
		{in: strings.Repeat("n", 255), want: strings.Repeat("n", 255)},
		{in: "x/" + strings.Repeat("n", 256), refused: "segment 2 is 256 bytes long; the limit is 255 bytes"},
		{in: strings.TrimSuffix(strings.Repeat("d/", 32), "/"), want: strings.TrimSuffix(strings.Repeat("d/", 32), "/")},
		{in: strings.Repeat("d/", 33), refused: "has 33 segments; the limit is 32"},
		{in: strings.Repeat("./d/", 32), want: strings.TrimSuffix(strings.Repeat("d/", 32), "/")},
		{in: strings.Repeat(strings.Repeat("n", 200)+"/", 2) + strings.Repeat("n", 110), want: strings.Repeat(strings.Repeat("n", 200)+"/", 2) + strings.Repeat("n", 110)},
		{in: strings.Repeat(strings.Repeat("n", 200)+"/", 2) + strings.Repeat("n", 111), refused: "is 513 bytes long; the limit is 512 bytes"},
	} {
		got, err := hub.NormalizePattern(tc.in)
		if tc.refused != "" {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("NormalizePattern(%q) = %q, %v; want EINVALID mentioning %q", tc.in, got, err, tc.refused)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizePattern(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"src", "src/a.go", true}, // a directory covers what is below
		{"src", "src", true},
		{"src", "srcx/a.go", false}, // a prefix of a name is not a directory
		{"src/hub", "src/hub/x/y.go", true},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/sub/a.go", false}, // * stays inside one segment
		{"src/**/*.go", "src/a.go", true},   // ** is zero or more segments
		{"src/**/*.go", "src/a/b/c.go", true},
		{"src/**/*.go", "src/a/b/c.md", false},
		{"**/*.md", "README.md", true},
		{"**/*.md", "docs/x/y.md", true},
		{"**", "anything/at/all", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"src/A.go", "src/a.go", false}, // case-sensitive
		{"docs", "Docs/x.md", false},
		{"*", "x/y", true},
		{"src/a.go", "src/a.go.orig", false},
	} {
		if got := hub.MatchPattern(tc.pattern, tc.path); got != tc.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestPatternsOverlap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"src", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/*_test.go", true},
		{"src/*.go", "src/*.md", false},
		{"src/a*", "src/*b", true},   // ab
		{"src/a*x", "src/b*", false}, // starts with a, or with b
		{"**/*.go", "cmd/hub/main.go", true},
		{"**/*.go", "docs", true},        // docs/x.go
		{"**/x.go", "src/**/y.go", true}, // src/x.go/y.go: a pattern covers what is below it
		{"src/*.go", "lib/**", false},
		{"src/**", "**/test", true},
		{"src/**/x", "lib/**", false},
		{"a?", "ab", true},
		{"a?", "abc", false},
		{"*", "README.md", true},
		{"Src", "src", false},
		{"internal/hub", "internal/hubx", false},
	} {
		if got := hub.PatternsOverlap(tc.a, tc.b); got != tc.want {
			t.Errorf("PatternsOverlap(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := hub.PatternsOverlap(tc.b, tc.a); got != tc.want {
			t.Errorf("PatternsOverlap(%q, %q) = %v, want %v (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestDecideReservation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	held := []*hub.Reservation{
		{ID: 1, AgentID: 2, AgentName: "bob", Pattern: "src", Mode: hub.ReservationExclusive, ExpiresAt: now.Add(time.Hour)},
		{ID: 2, AgentID: 3, AgentName: "carol", Pattern: "docs", Mode: hub.ReservationShared, ExpiresAt: now.Add(time.Hour)},
		{ID: 3, AgentID: 1, AgentName: "alice", Pattern: "cmd", Mode: hub.ReservationExclusive, ExpiresAt: now.Add(time.Minute)},
	}
	req := func(mode hub.ReservationMode, ps ...string) hub.ReservationRequest {
		return hub.ReservationRequest{Patterns: ps, Mode: mode, TTL: 30 * time.Minute}
	}
	decide := func(r hub.ReservationRequest) (hub.ReservationDecision, error) {
		overlaps := func(h *hub.Reservation) []int {
			var hits []int
			for i, p := range r.Patterns {
				if hub.PatternsOverlap(p, h.Pattern) {
					hits = append(hits, i)
				}
			}
			return hits
		}
		return hub.DecideReservation(1, "alice", r, held, overlaps, now)
	}
	t.Run("exclusive over another's exclusive is refused, naming the holder", func(t *testing.T) {
		d, err := decide(req(hub.ReservationExclusive, "lib", "src/a.go"))
		if hub.ErrorCode(err) != hub.EPRECONDITION || !strings.Contains(err.Error(), "bob") || !strings.Contains(err.Error(), "2026-01-02T04:00:00Z") {
			t.Fatalf("err = %v, want EPRECONDITION naming bob and the expiry", err)
		}
		if len(d.Insert)+len(d.Update) != 0 {
			t.Errorf("a refused request reserves %d patterns, want none (all or nothing)", len(d.Insert)+len(d.Update))
		}
	})
	t.Run("shared over exclusive is granted with the conflict named", func(t *testing.T) {
		d, err := decide(req(hub.ReservationShared, "src/a.go"))
		if err != nil || len(d.Insert) != 1 || len(d.Conflicts) != 1 || d.Conflicts[0].Held.AgentName != "bob" || d.Conflicts[0].Refusing {
			t.Fatalf("got %+v, %v; want one insert and bob's conflict, not refusing", d, err)
		}
	})
	t.Run("exclusive over shared is granted with the conflict named", func(t *testing.T) {
		d, err := decide(req(hub.ReservationExclusive, "docs/x.md"))
		if err != nil || len(d.Insert) != 1 || len(d.Conflicts) != 1 || d.Conflicts[0].Held.AgentName != "carol" {
			t.Fatalf("got %+v, %v; want one insert and carol's conflict", d, err)
		}
	})
	t.Run("own reservations never conflict; the same pattern is renewed", func(t *testing.T) {
		d, err := decide(req(hub.ReservationShared, "cmd", "cmd/hub"))
		if err != nil || len(d.Conflicts) != 0 || len(d.Update) != 1 || d.Update[0].ID != 3 || len(d.Insert) != 1 {
			t.Fatalf("got %+v, %v; want cmd renewed in place and cmd/hub inserted, no conflict", d, err)
		}
		if got, want := d.Update[0].ExpiresAt, now.Add(30*time.Minute); !got.Equal(want) || d.Update[0].Mode != hub.ReservationShared {
			t.Errorf("renewed: expires %v mode %s, want %v shared", got, d.Update[0].Mode, want)
		}
	})
}

func TestReservationTTLAndMode(t *testing.T) {
	t.Parallel()
	if d, err := hub.ReservationTTL(0); err != nil || d != 30*time.Minute {
		t.Errorf("ReservationTTL(0) = %v, %v; want 30m", d, err)
	}
	for _, d := range []time.Duration{time.Second, 25 * time.Hour, -time.Minute} {
		if _, err := hub.ReservationTTL(d); hub.ErrorCode(err) != hub.EINVALID {
			t.Errorf("ReservationTTL(%v) err = %v, want EINVALID", d, err)
		}
	}
	if m, err := hub.ParseReservationMode(""); err != nil || m != hub.ReservationExclusive {
		t.Errorf(`ParseReservationMode("") = %q, %v; want exclusive`, m, err)
	}
	if _, err := hub.ParseReservationMode("readonly"); hub.ErrorCode(err) != hub.EINVALID {
		t.Errorf("ParseReservationMode(readonly) err = %v, want EINVALID", err)
	}
}

func TestReleaseAbandoned(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		disabled bool
		last     time.Duration // before now
		waits    int
		want     bool
	}{
		{disabled: true, last: 0, want: true},
		{last: 59 * time.Minute, want: false},
		{last: time.Hour, want: true},
		{last: 2 * time.Hour, waits: 1, want: false}, // parked in a wait: present
	} {
		if got := hub.ReleaseAbandoned(tc.disabled, now.Add(-tc.last), tc.waits, now, time.Hour); got != tc.want {
			t.Errorf("ReleaseAbandoned(%+v) = %v, want %v", tc, got, tc.want)
		}
	}
}
