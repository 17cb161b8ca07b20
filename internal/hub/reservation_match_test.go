package hub_test

import (
	"fmt"
	"math/rand/v2"
	pathpkg "path"
	"strings"
	"testing"

	"github.com/agenthub/hub/internal/hub"
)

// The reference decisions the matching must agree with: the plain
// definitions, written for clarity and not for cost (path.Match per
// segment, ** by trying every split, and overlap as a memoised search over
// (i, j) positions of runes inside a segment and of segments across).

func refMatch(pattern, path string) bool {
	ps := strings.Split(pattern, "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	for k := len(xs); k >= 1; k-- {
		if refMatchSegments(ps, xs[:k]) {
			return true
		}
	}
	return false
}

func refMatchSegments(ps, xs []string) bool {
	if len(ps) == 0 {
		return len(xs) == 0
	}
	if ps[0] == "**" {
		for i := 0; i <= len(xs); i++ {
			if refMatchSegments(ps[1:], xs[i:]) {
				return true
			}
		}
		return false
	}
	if len(xs) == 0 {
		return false
	}
	ok, err := pathpkg.Match(ps[0], xs[0])
	return ok && err == nil && refMatchSegments(ps[1:], xs[1:])
}

func refOverlap(a, b string) bool {
	return refIntersect(strings.Split(a, "/"), strings.Split(b, "/"), func(s string) bool { return s == "**" }, func(x, y string) bool {
		return refIntersect([]rune(x), []rune(y), func(r rune) bool { return r == '*' },
			func(p, q rune) bool { return p == '?' || q == '?' || p == q }, false)
	}, true)
}

func refIntersect[T any](x, y []T, star func(T) bool, same func(a, b T) bool, open bool) bool {
	memo := map[[2]int]bool{}
	var ov func(i, j int) bool
	ov = func(i, j int) bool {
		if (i == len(x) && j == len(y)) || (open && (i == len(x) || j == len(y))) {
			return true
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var v bool
		switch {
		case i < len(x) && star(x[i]):
			v = ov(i+1, j) || (j < len(y) && ov(i, j+1))
		case j < len(y) && star(y[j]):
			v = ov(i, j+1) || (i < len(x) && ov(i+1, j))
		case i < len(x) && j < len(y):
			v = same(x[i], y[j]) && ov(i+1, j+1)
		}
		memo[k] = v
		return v
	}
	return ov(0, 0)
}

// randomPattern returns a normalised pattern of 1 to 4 segments over a
// small alphabet, so that overlaps and near misses are frequent.
func randomPattern(r *rand.Rand, alphabet []string) string {
	segs := make([]string, 1+r.IntN(4))
	for i := range segs {
		if r.IntN(5) == 0 {
			segs[i] = "**"
			continue
		}
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		segs[i] = b.String()
	}
	p := strings.Join(segs, "/")
	if n, err := hub.NormalizePattern(p); err == nil {
		return n
	}
	return p // invalid UTF-8: a path, not a pattern
}

// The matching agrees with the reference on many random pairs, paths
// included (a path's * and ? are its own characters, never wildcards, and
// a path, unlike a pattern, may hold bytes of invalid UTF-8).
func TestMatchingAgreesWithTheDefinitions(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 1))
	letters := []string{"a", "b", "?", "*", "é"}
	bytes := append(letters, "\xc3", "\xa9") // é's bytes apart
	for range 20000 {
		a, b := randomPattern(r, letters), randomPattern(r, letters)
		if got, want := hub.PatternsOverlap(a, b), refOverlap(a, b); got != want {
			t.Fatalf("PatternsOverlap(%q, %q) = %v, want %v", a, b, got, want)
		}
		path := strings.ReplaceAll(randomPattern(r, bytes), "**", "c")
		if got, want := hub.MatchPattern(a, path), refMatch(a, path); got != want {
			t.Fatalf("MatchPattern(%q, %q) = %v, want %v", a, path, got, want)
		}
	}
}

// Within the limits, the worst pairs answer as the definitions do.
func TestMatchingAtTheLimits(t *testing.T) {
	t.Parallel()
	for _, p := range worstPairs() {
		if got, want := hub.PatternsOverlap(p.a, p.b), refOverlap(p.a, p.b); got != want {
			t.Errorf("%s: PatternsOverlap = %v, want %v", p.name, got, want)
		}
	}
}

// A byte of invalid UTF-8 in a path is one character that only itself
// matches, as path.Match reads it.
func TestMatchPatternInvalidUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"a?b", "a\xffb", true},
		{"a?b", "a\xff\xfeb", false},
		{"a\uFFFDb", "a\xffb", false},
		{"*\xff", "x\xff", true},
	} {
		if got := hub.MatchPattern(tc.pattern, tc.path); got != tc.want || got != refMatch(tc.pattern, tc.path) {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// Patterns of the attack on the writer: ten shared patterns of 510 stars
// in one segment, then a request of 510 stars against them. Without
// bounds each pair cost len(a)×len(b) inside the write transaction.
func starPatterns() (held []string, attack string) {
	for i := range 10 {
		held = append(held, strings.Repeat("a*", 510)+fmt.Sprintf("b%02d", i))
	}
	return held, strings.Repeat("a*", 510) + "c"
}

// pair is two patterns of a benchmark or test.
type pair struct{ name, a, b string }

// worstPairs are the costliest pairs found within the pattern limits: the
// most stars and the longest segments, pieces that fit almost everywhere
// and fail at their last character, ** around every segment so that every
// pair of segment positions is visited, and no overlap in the end (an
// overlap found stops the search early).
func worstPairs() []pair {
	as := func(n int) string { return strings.Repeat("a", n) }
	late := "*" + as(125) + "b*"    // a piece that fails at its last character
	deep := func(s string) string { // **/s/**/s… within 512 bytes and 32 segments
		var parts []string
		for len(strings.Join(append(parts, "**", s), "/")) <= 512 && len(parts)+2 <= 32 {
			parts = append(parts, "**", s)
		}
		return strings.Join(parts, "/")
	}
	return []pair{
		{"one segment: a piece failing late in letters", as(255), late},
		{"one segment: four stars against letters", as(255), "*" + as(60) + "*" + as(60) + "*" + as(60) + "b*"},
		{"one segment: stars against stars", "*" + as(126) + "*" + as(126) + "b", "c*" + as(126) + "*" + as(126)},
		{"two long segments each, ** around all", deep(as(250)), deep(late)},
		{"eight segments each, ** around all", deep(as(60)), deep("*" + as(29) + "b*")},
		{"32 short segments, ** between all", deep("a"), deep("*b")},
		{"**/*/ sixteen times against 17 names", strings.TrimSuffix(strings.Repeat("**/*/", 16), "/"), strings.Repeat("a/", 15) + "b/c"},
	}
}

func FuzzPatternsOverlap(f *testing.F) {
	for _, p := range worstPairs() {
		f.Add(p.a[:min(len(p.a), 80)], p.b[:min(len(p.b), 80)], "a/b")
	}
	f.Add("src/**/*.go", "**/x_test.go", "src/a/x_test.go")
	f.Add("a*b?c", "?*c", "abxc")
	f.Fuzz(func(t *testing.T, a, b, path string) {
		na, errA := hub.NormalizePattern(a)
		nb, errB := hub.NormalizePattern(b)
		if errA != nil || errB != nil {
			return
		}
		got := hub.PatternsOverlap(na, nb)
		if want := refOverlap(na, nb); got != want {
			t.Fatalf("PatternsOverlap(%q, %q) = %v, want %v", na, nb, got, want)
		}
		if got != hub.PatternsOverlap(nb, na) {
			t.Fatalf("PatternsOverlap(%q, %q) is not symmetric", na, nb)
		}
		if hub.MatchPattern(na, path) != refMatch(na, path) {
			t.Fatalf("MatchPattern(%q, %q) = %v, want %v", na, path, !refMatch(na, path), refMatch(na, path))
		}
		if hub.MatchPattern(na, path) && hub.MatchPattern(nb, path) && !got {
			t.Fatalf("%q and %q both cover %q but do not overlap", na, nb, path)
		}
	})
}
