package hub_test

// Fuzz targets for the domain's parsers. `go test` runs them on their seed
// corpora (f.Add and testdata/fuzz/<Target>/); scripts/ci-fuzz.sh runs each
// with -fuzz for a few seconds. Each checks properties, not just "no panic".

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthub/hub/internal/hub"
)

// fuzzZones are fixed zones (no DST gap, so every valid ID round-trips) and
// no tzdata is needed.
var fuzzZones = []*time.Location{time.UTC, time.FixedZone("JST", 9*3600), time.FixedZone("NST", -(3*3600 + 1800))}

func FuzzParseHeartbeatID(f *testing.F) {
	for _, s := range []string{"20260102030405", "20261231235959", "20260230120000", "2026010203040", "202601020304050", "2026010203040x", "", "00000000000000", "99999999999999", "+2026010203040", "２０２６０１０２０３０４０５"} {
		f.Add(s, int64(1_767_323_045))
	}
	f.Fuzz(func(t *testing.T, s string, nowUnix int64) {
		now := time.Unix(nowUnix%(1<<40), 0) // keep years within time's range
		for _, loc := range fuzzZones {
			got, err := hub.ParseHeartbeatID(s, loc, now)
			if err != nil {
				if hub.ErrorCode(err) != hub.EINVALID {
					t.Fatalf("ParseHeartbeatID(%q) error code %q, want EINVALID: %v", s, hub.ErrorCode(err), err)
				}
				if msg := hub.ErrorMessage(err); !strings.Contains(msg, "YYYYMMDDHHMMSS") && !strings.Contains(msg, "in the future") {
					t.Fatalf("ParseHeartbeatID(%q) error %q names neither the format nor the future", s, msg)
				}
				continue
			}
			if len(s) != 14 {
				t.Fatalf("ParseHeartbeatID accepted %q (%d bytes)", s, len(s))
			}
			if back := hub.FormatHeartbeatID(got, loc); back != s {
				t.Fatalf("ParseHeartbeatID(%q) = %v, which formats back as %q", s, got, back)
			}
			if got.After(now) {
				t.Fatalf("ParseHeartbeatID(%q) accepted an instant after now (%v > %v)", s, got, now)
			}
		}
	})
}

// validAgentName is an independent check of the agent name pattern
// ^[a-z0-9][a-z0-9._-]{0,62}$.
func validAgentName(s string) bool {
	if len(s) < 1 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// mentionRE is the definition of a mention that ParseMentions spells out
// by hand: @name at the start or after a character that is neither a word
// character nor '@', trailing dots dropped, first appearance kept.
var mentionRE = regexp.MustCompile(`(?:^|[^\w@])@([a-z0-9][a-z0-9._-]{0,62})`)

func mentionsByPattern(body string) []string {
	var out []string
	for _, m := range mentionRE.FindAllStringSubmatch(body, -1) {
		if name := strings.TrimRight(m[1], "."); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func FuzzParseMentions(f *testing.F) {
	for _, s := range []string{"hi @bob", "@alice and @bob and @alice", "mail a@b.com", "ask @bob.", "@@x", "@", "@-x", "@a_b-c.d", "(@x) [@y] @z,", "@" + strings.Repeat("a", 70), "日本語 @ken さん", "@Bob",
		"@a.@b", "@a-@b", "@a @b", "x@a @b", "@" + strings.Repeat("a", 63) + ".@c", "@" + strings.Repeat("a", 62) + "..", "é@x", "\xff@x", "_@x", "@x@y", "@x\n@y", "a.@b", "@a..b."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		names := hub.ParseMentions(body)
		if want := mentionsByPattern(body); !slices.Equal(names, want) {
			t.Fatalf("ParseMentions(%q) = %q, want %q (the pattern %s)", body, names, want, mentionRE)
		}
		seen := map[string]bool{}
		for _, n := range names {
			if !validAgentName(n) {
				t.Fatalf("ParseMentions(%q) returned %q, not an agent name", body, n)
			}
			if strings.HasSuffix(n, ".") {
				t.Fatalf("ParseMentions(%q) returned %q with a trailing dot", body, n)
			}
			if seen[n] {
				t.Fatalf("ParseMentions(%q) returned %q twice", body, n)
			}
			seen[n] = true
			if !strings.Contains(body, "@"+n) {
				t.Fatalf("ParseMentions(%q) returned %q, which is not @-mentioned in the body", body, n)
			}
		}
	})
}

// validChannel is an independent check of ^#[a-z0-9][a-z0-9._-]{0,62}$.
func validChannel(s string) bool {
	return len(s) >= 2 && s[0] == '#' && validAgentName(s[1:])
}

func FuzzValidateChannel(f *testing.F) {
	for _, s := range []string{"#general", "#ops-1", "general", "#", "#-x", "#Ops", "#ops\n", "##ops", "#" + strings.Repeat("a", 63), "#" + strings.Repeat("a", 64), "#a b", "#日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := hub.ValidateChannel(name)
		if want := validChannel(name); (err == nil) != want {
			t.Fatalf("ValidateChannel(%q) = %v, want valid=%v", name, err, want)
		}
		if err != nil {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), "#general") {
				t.Fatalf("ValidateChannel(%q) error %v: want EINVALID with an example", name, err)
			}
		}
	})
}

func FuzzParseCronExpr(f *testing.F) {
	for _, s := range []string{"0 9 * * 1-5", "*/15 * * * *", "@daily", "@hourly", "@every 1m", "TZ=UTC 0 9 * * *", "0 9 * *", "0 9 * * * *", "60 * * * *", "0 0 30 2 *", "5-1 * * * *", "*/0 * * * *", "0 0 1 jan-dec mon-fri", "? ? ? ? ?", "", "   ", "@", "1,2,3 4-5/2 * * SUN"} {
		f.Add(s)
	}
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		sched, err := hub.ParseCronExpr(expr)
		if err != nil {
			if hub.ErrorCode(err) != hub.EINVALID || !strings.Contains(hub.ErrorMessage(err), "expected 5 fields") {
				t.Fatalf("ParseCronExpr(%q) error %v: want EINVALID saying what is expected", expr, err)
			}
			return
		}
		if sched == nil {
			t.Fatalf("ParseCronExpr(%q) returned no schedule and no error", expr)
		}
		// Next is either never (an impossible date such as Feb 30: the zero
		// time) or strictly later, and a second call goes on from there.
		next := sched.Next(from)
		if next.IsZero() {
			return
		}
		if !next.After(from) {
			t.Fatalf("ParseCronExpr(%q).Next(%v) = %v, not after", expr, from, next)
		}
		if n2 := sched.Next(next); !n2.IsZero() && !n2.After(next) {
			t.Fatalf("ParseCronExpr(%q): Next(%v) = %v, not after", expr, next, n2)
		}
	})
}
